import { randomBytes } from 'node:crypto';
import http from 'node:http';
import busboy from 'busboy';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { listen } from './fake-server.ts';

/**
 * A local document-parser API in the shape of Mathpix's v3 PDF API (see
 * docs/conversion-backends.md): `POST /v3/pdf` (multipart `file` +
 * `options_json`, answers `{"pdf_id"}`), `GET /v3/pdf/{id}` (status, moving
 * through received, split and processing to completed), `GET /v3/pdf/{id}.html`
 * and `DELETE /v3/pdf/{id}`. Every request must carry the key in `app_key`;
 * a wrong or missing key gets Mathpix's 401 body.
 *
 * By default a job's HTML is made from the uploaded PDF's own text (pdf.js):
 * the first line as a heading, the rest as a paragraph, inside a Mathpix-like
 * page with a stylesheet. Tests can script failures for the next requests of
 * a route, and replace the rendering or the job outcome.
 */
type ParserRoute = 'submit' | 'status' | 'result' | 'delete';

type ParserAnswer =
  /** Answers with this status (and a JSON error body unless `body` is given); `route` limits it to one route. */
  | { kind: 'error'; status: number; route?: ParserRoute; body?: string; headers?: Record<string, string> }
  /** Destroys the connection without answering. */
  | { kind: 'drop'; route?: ParserRoute };

type ParserRequest = {
  method: string;
  path: string;
  route: ParserRoute | 'unknown';
  headers: http.IncomingHttpHeaders;
  /** multipart fields of a submit */
  fields: Record<string, string>;
  /** the uploaded file of a submit */
  file?: { name: string; type: string; bytes: Buffer };
};

type ParserJobBehaviour = {
  /** status requests answered with a pending status before the job completes */
  pendingPolls: number;
  /** when set, the job ends in status `error` with this message */
  error?: string;
  /** the HTML of a job, from its uploaded PDF */
  render: (pdf: Buffer) => Promise<string>;
};

type Job = { id: string; pdf: Buffer; polls: number; behaviour: ParserJobBehaviour; html?: string };

/** The uploaded PDF's text as HTML: first text line as a heading, the rest as one paragraph. */
async function renderFromText(pdf: Buffer): Promise<string> {
  const task = getDocument({ data: new Uint8Array(pdf), verbosity: 0 });
  const document = await task.promise;
  try {
    const lines: string[] = [];
    for (let number = 1; number <= document.numPages; number++) {
      const content = await (await document.getPage(number)).getTextContent();
      let line = '';
      let lastY: number | undefined;
      for (const item of content.items) {
        if (!('str' in item)) continue;
        const y = item.transform[5] as number;
        if (lastY !== undefined && Math.abs(y - lastY) > 1 && line.trim()) {
          lines.push(line.trim());
          line = '';
        }
        lastY = y;
        line += item.str;
        if (item.hasEOL) {
          if (line.trim()) lines.push(line.trim());
          line = '';
        }
      }
      if (line.trim()) lines.push(line.trim());
    }
    const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    const [title, ...rest] = lines;
    const body = `${title ? `<h1>${escapeHtml(title)}</h1>` : ''}${rest.length ? `<p>${escapeHtml(rest.join(' '))}</p>` : ''}`;
    return `<!DOCTYPE html><html><head><meta charset="utf-8"><style>#preview-content{font-family:serif}</style></head><body><div id="preview-content">${body}</div></body></html>`;
  } finally {
    await task.destroy();
  }
}

const DEFAULT_BEHAVIOUR: ParserJobBehaviour = { pendingPolls: 2, render: renderFromText };
const PENDING = ['received', 'split', 'processing'] as const;

export type ParserFake = {
  url: string;
  apiKey: string;
  requests: ParserRequest[];
  /** jobs not deleted yet */
  jobs: Map<string, Job>;
  next: (...answers: ParserAnswer[]) => void;
  /** How the next jobs behave (merged over the default). */
  behave: (behaviour: Partial<ParserJobBehaviour>) => void;
  count: (route: ParserRoute) => number;
  reset: () => void;
  close: () => Promise<void>;
};

export async function startParserFake(options: { apiKey?: string } = {}): Promise<ParserFake> {
  const apiKey = options.apiKey ?? `fake-parser-key-${randomBytes(6).toString('hex')}`;
  const requests: ParserRequest[] = [];
  const jobs = new Map<string, Job>();
  const script: ParserAnswer[] = [];
  let behaviour = DEFAULT_BEHAVIOUR;

  const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  function routeOf(method: string, path: string): { route: ParserRoute | 'unknown'; id?: string } {
    if (method === 'POST' && path === '/v3/pdf') return { route: 'submit' };
    const match = /^\/v3\/pdf\/([^/.]+)(\.html)?$/.exec(path);
    if (!match) return { route: 'unknown' };
    const id = decodeURIComponent(match[1]!);
    if (method === 'GET') return { route: match[2] ? 'result' : 'status', id };
    if (method === 'DELETE' && !match[2]) return { route: 'delete', id };
    return { route: 'unknown' };
  }

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const { route, id } = routeOf(req.method ?? '', path);
    const request: ParserRequest = { method: req.method ?? '', path, route, headers: req.headers, fields: {} };
    requests.push(request);
    const answer = () => handle(req, res, request, id).catch((error: unknown) => sendJson(res, 500, { error: String(error) }));
    if (route !== 'submit' || !req.headers['content-type']?.startsWith('multipart/form-data')) {
      req.resume();
      req.on('end', answer);
      return;
    }
    const form = busboy({ headers: req.headers });
    const chunks: Buffer[] = [];
    form.on('field', (name, value) => {
      request.fields[name] = value;
    });
    form.on('file', (name, stream, info) => {
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (name === 'file') request.file = { name: info.filename ?? '', type: info.mimeType, bytes: Buffer.concat(chunks) };
      });
    });
    form.on('close', answer);
    form.on('error', () => sendJson(res, 400, { error: 'Malformed multipart body' }));
    req.pipe(form);
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, request: ParserRequest, id: string | undefined) {
    if (request.route === 'unknown') return sendJson(res, 404, { error: 'Not found' });
    if (req.headers.app_key !== apiKey) {
      return sendJson(res, 401, { error: 'Invalid credentials', error_info: { id: 'http_unauthorized', message: 'Invalid credentials' } });
    }
    const scripted = script.findIndex((answer) => !answer.route || answer.route === request.route);
    if (scripted >= 0) {
      const [answer] = script.splice(scripted, 1);
      if (answer!.kind === 'drop') {
        req.socket.destroy();
        return;
      }
      if (answer!.body !== undefined) {
        res.writeHead(answer!.status, { 'content-type': 'text/html', ...answer!.headers });
        res.end(answer!.body);
        return;
      }
      return sendJson(res, answer!.status, { error: `Scripted ${answer!.status}`, error_info: { id: 'sys_exception' } }, answer!.headers);
    }

    if (request.route === 'submit') {
      if (!request.file) return sendJson(res, 400, { error: 'No file or url provided', error_info: { id: 'http_bad_request' } });
      const jobId = `2026_01_15_${randomBytes(10).toString('hex')}`;
      jobs.set(jobId, { id: jobId, pdf: request.file.bytes, polls: 0, behaviour });
      return sendJson(res, 200, { pdf_id: jobId });
    }
    const job = jobs.get(id!);
    if (!job) return sendJson(res, 404, { error: 'PDF not found', error_info: { id: 'pdf_not_found' } });
    if (request.route === 'delete') {
      jobs.delete(job.id);
      return sendJson(res, 200, {});
    }
    const done = job.polls >= job.behaviour.pendingPolls;
    if (request.route === 'status') {
      job.polls++;
      if (!done) {
        const status = PENDING[Math.min(job.polls - 1, PENDING.length - 1)]!;
        return sendJson(res, 200, { status, num_pages: 1, percent_done: Math.round((100 * job.polls) / (job.behaviour.pendingPolls + 1)) });
      }
      if (job.behaviour.error) return sendJson(res, 200, { status: 'error', error: job.behaviour.error });
      return sendJson(res, 200, {
        status: 'completed',
        num_pages: 1,
        num_pages_completed: 1,
        percent_done: 100,
        conversion_status: { html: { status: 'completed' } },
      });
    }
    if (!done || job.behaviour.error) return sendJson(res, 404, { error: 'Output not ready', error_info: { id: 'conversion_not_ready' } });
    job.html ??= await job.behaviour.render(job.pdf);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(job.html);
  }

  const { url, close } = await listen(server);
  return {
    url,
    apiKey,
    requests,
    jobs,
    next: (...answers) => script.push(...answers),
    behave: (change) => {
      behaviour = { ...DEFAULT_BEHAVIOUR, ...change };
    },
    count: (route) => requests.filter((request) => request.route === route).length,
    reset: () => {
      requests.length = 0;
      script.length = 0;
      jobs.clear();
      behaviour = DEFAULT_BEHAVIOUR;
    },
    close,
  };
}
