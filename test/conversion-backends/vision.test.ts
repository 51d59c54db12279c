import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { textCoverage } from '../../server/conversion/backends/vision/coverage.ts';
import {
  COVERAGE_TEXT,
  createVisionBackend,
  hashPrompt,
  htmlToBlocks,
  isAcceptableAnswer,
  PAGE_TEXT,
  SYSTEM_PROMPT,
  visionPrompt,
} from '../../server/conversion/backends/vision/vision-backend.ts';
import type { PageResult } from '../../server/conversion/model.ts';
import { silentLog } from '../../server/log.ts';
import { startBedrockFake } from '../fakes/bedrock.ts';
import { createTestDatabase } from '../helpers/database.ts';

await createTestDatabase();
const bedrockFake = await startBedrockFake();
afterAll(() => bedrockFake.close());
beforeEach(() => bedrockFake.reset());

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const MODEL_ID = 'anthropic.claude-3-5-sonnet-20241022-v2:0';
const FAST_RETRY = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4 };

function bedrockConfig(env: Record<string, string> = {}) {
  return loadConfig({
    BEDROCK_ENDPOINT: bedrockFake.url,
    BEDROCK_MODEL_ID: MODEL_ID,
    BEDROCK_MAX_TOKENS: '4096',
    BEDROCK_TEMPERATURE: '0.2',
    CLOUD_ACCESS_KEY_ID: 'AKIDFAKE',
    CLOUD_SECRET_ACCESS_KEY: 'fake-secret',
    ...env,
  }).conversion.bedrock;
}

function backend(env: Record<string, string> = {}, extra: { timeoutMs?: number } = {}) {
  return createVisionBackend({ bedrock: bedrockConfig(env), log: silentLog, retry: FAST_RETRY, ...extra });
}

/** A PDF of pages whose text is given, drawn with a standard font (so it has a text layer). */
async function makePdf(pages: string[]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const [index, text] of pages.entries()) {
    const page = document.addPage([400 + index * 10, 600]);
    page.drawText(text, { x: 40, y: 540, size: 12, font });
  }
  return document.save();
}

/** The local engine's stand-in: counts its calls and returns a recognisable page. */
function localFallback(page: number) {
  const calls = { count: 0 };
  const fallback = async (): Promise<PageResult> => {
    calls.count++;
    return {
      page,
      label: String(page),
      backend: 'local',
      classification: 'standard',
      reasons: [],
      blocks: [{ kind: 'paragraph', page, content: [{ kind: 'text', text: 'from the local engine' }] }],
      warnings: [],
      textLayerWords: 3,
      ocr: false,
      timings: { ms: 1 },
      costUsd: 0,
    };
  };
  return { calls, fallback };
}

const TEXT_LAYER = 'Quarterly results Revenue grew in every region';
const GOOD_HTML = `<h1>Quarterly results</h1><p>Revenue grew in <em>every</em> region.</p>`;

describe('vision backend: accepted pages', () => {
  it('sends the page as a one-page PDF document block with the system prompt and inference config, and parses the answer', async () => {
    const pdf = await makePdf(['first page', 'second page', 'third page']);
    bedrockFake.next({ kind: 'text', text: GOOD_HTML, inputTokens: 1000, outputTokens: 200 });
    const { calls, fallback } = localFallback(2);

    const result = await backend().convertPage(pdf, 2, { textLayerText: TEXT_LAYER, fallback });

    expect(calls.count).toBe(0);
    expect(bedrockFake.requests).toHaveLength(1);
    const request = bedrockFake.requests[0]!;
    expect(request.modelId).toBe(MODEL_ID);
    expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDFAKE\//);
    expect(request.system).toEqual([SYSTEM_PROMPT]);
    expect(request.texts).toEqual([PAGE_TEXT]);
    expect(request.inferenceConfig).toEqual({ maxTokens: 4096, temperature: 0.2 });
    expect(request.documents).toHaveLength(1);
    const document = request.documents[0]!;
    expect(document).toMatchObject({ format: 'pdf', name: 'page-2' });
    const sent = await PDFDocument.load(document.bytes);
    expect(sent.getPageCount()).toBe(1);
    // Page 2 was drawn 410 points wide: the right page was cut.
    expect(sent.getPage(0).getWidth()).toBe(410);

    expect(result).toMatchObject({
      page: 2,
      backend: 'chunked-vision',
      classification: 'standard',
      reasons: [],
      warnings: [],
      ocr: false,
      model: MODEL_ID,
      promptHash: hashPrompt(visionPrompt({ maxTokens: 4096, temperature: 0.2 })),
      textLayerWords: 7,
    });
    expect(result.blocks).toEqual([
      { kind: 'heading', page: 2, level: 1, content: [{ kind: 'text', text: 'Quarterly results' }] },
      {
        kind: 'paragraph',
        page: 2,
        content: [
          { kind: 'text', text: 'Revenue grew in ' },
          { kind: 'emphasis', children: [{ kind: 'text', text: 'every' }] },
          { kind: 'text', text: ' region.' },
        ],
      },
    ]);
    // 1000 input tokens at $0.003/1k plus 200 output tokens at $0.015/1k.
    expect(result.costUsd).toBeCloseTo(0.006, 10);
  });

  it('classifies a page with a table, a figure and a formula as complex, with the reasons', async () => {
    const pdf = await makePdf(['tables']);
    bedrockFake.next({
      kind: 'text',
      text: `<table><tr><th>Region</th><th>Revenue</th></tr><tr><td>North</td><td>10</td></tr></table>
        <figure><img alt="Bar chart of revenue by region"><figcaption>Figure 1</figcaption></figure>
        <math display="block"><mi>x</mi><mo>=</mo><mn>1</mn></math>`,
    });
    const result = await backend().convertPage(pdf, 1, { textLayerText: 'Region Revenue North 10 Figure 1', fallback: localFallback(1).fallback });
    expect(result.classification).toBe('complex');
    expect(result.reasons).toEqual(['table', 'figure', 'formula']);
  });

  it('sends a page of a real multi-page corpus file as its own valid PDF', async () => {
    const pdf = new Uint8Array(await readFile(path.join(CORPUS, 'geotopo-117-pages.pdf')));
    bedrockFake.next({ kind: 'text', text: '<h2>Kapitel</h2><p>Text der Seite.</p>' });
    const result = await backend().convertPage(pdf, 5, { textLayerText: '', fallback: localFallback(5).fallback });
    expect(result.backend).toBe('chunked-vision');
    const bytes = bedrockFake.requests[0]!.documents[0]!.bytes;
    expect(bytes.length).toBeLessThan(pdf.length);
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1);
  });

  it('takes the HTML out of a Markdown fence and drops scripts, styles and handlers from it', async () => {
    const pdf = await makePdf(['fenced']);
    bedrockFake.next({
      kind: 'text',
      text: 'Here is the page:\n```html\n<style>p{color:red}</style><p onclick="steal()">Safe <script>alert(1)</script>text</p>\n```\n',
    });
    const result = await backend().convertPage(pdf, 1, { textLayerText: 'Safe text', fallback: localFallback(1).fallback });
    expect(result.blocks).toEqual([{ kind: 'paragraph', page: 1, content: [{ kind: 'text', text: 'Safe text' }] }]);
    expect(JSON.stringify(result.blocks)).not.toMatch(/steal|alert|color/);
  });
});

describe('vision backend: rejected answers', () => {
  it.each(['guardrail_intervened', 'content_filtered', 'max_tokens'])(
    're-asks once on stop reason %s, then falls back to the local engine',
    async (stopReason) => {
      const pdf = await makePdf(['rejected']);
      bedrockFake.next(
        { kind: 'text', text: '<p>Partial</p>', stopReason, inputTokens: 1000, outputTokens: 100 },
        { kind: 'text', text: '<p>Partial</p>', stopReason, inputTokens: 1000, outputTokens: 100 },
      );
      const { calls, fallback } = localFallback(1);
      const result = await backend().convertPage(pdf, 1, { textLayerText: 'Partial', fallback });

      expect(bedrockFake.requests).toHaveLength(2);
      expect(bedrockFake.requests.map((request) => request.texts)).toEqual([[PAGE_TEXT], [PAGE_TEXT]]);
      expect(calls.count).toBe(1);
      expect(result.backend).toBe('local');
      expect(result.blocks).toEqual([{ kind: 'paragraph', page: 1, content: [{ kind: 'text', text: 'from the local engine' }] }]);
      expect(result.warnings).toHaveLength(1);
      expect(result.warnings[0]).toContain(`stop reason ${stopReason}`);
      expect(result.warnings[0]).toContain('local engine');
      expect(result.model).toBeUndefined();
      expect(result.promptHash).toBeUndefined();
      // The rejected calls were still paid for.
      expect(result.costUsd).toBeCloseTo(2 * (0.003 + 0.0015), 10);
    },
  );

  it('uses the re-ask when only the first answer is rejected', async () => {
    const pdf = await makePdf(['second try']);
    bedrockFake.next({ kind: 'text', text: '<p>Cut', stopReason: 'max_tokens' }, { kind: 'text', text: '<p>Second try</p>' });
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(pdf, 1, { textLayerText: 'Second try', fallback });
    expect(bedrockFake.requests).toHaveLength(2);
    expect(calls.count).toBe(0);
    expect(result.backend).toBe('chunked-vision');
    expect(result.blocks).toEqual([{ kind: 'paragraph', page: 1, content: [{ kind: 'text', text: 'Second try' }] }]);
  });

  it('treats empty text as rejected: re-asks once, then falls back', async () => {
    const pdf = await makePdf(['empty']);
    bedrockFake.next({ kind: 'text', text: '' }, { kind: 'text', text: '   \n' });
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(pdf, 1, { textLayerText: 'empty', fallback });
    expect(bedrockFake.requests).toHaveLength(2);
    expect(calls.count).toBe(1);
    expect(result.backend).toBe('local');
    expect(result.warnings[0]).toContain('empty text');
  });

  it('falls back at once when the page cannot be cut, without calling the model', async () => {
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(new TextEncoder().encode('%PDF-1.7\nnot really'), 1, { textLayerText: '', fallback });
    expect(bedrockFake.requests).toHaveLength(0);
    expect(calls.count).toBe(1);
    expect(result.warnings[0]).toMatch(/could not be cut/);
  });
});

describe('vision backend: coverage', () => {
  const textLayer = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon';

  it('re-asks with the coverage prompt when the answer misses words of the text layer, and keeps the better answer', async () => {
    const pdf = await makePdf(['coverage']);
    bedrockFake.next({ kind: 'text', text: '<p>alpha beta gamma delta epsilon zeta eta theta iota kappa</p>' }, { kind: 'text', text: `<p>${textLayer}</p>` });
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(pdf, 1, { textLayerText: textLayer, fallback });

    expect(bedrockFake.requests.map((request) => request.texts)).toEqual([[PAGE_TEXT], [COVERAGE_TEXT]]);
    expect(bedrockFake.requests[1]!.system).toEqual([SYSTEM_PROMPT]);
    expect(calls.count).toBe(0);
    expect(result.classification).toBe('standard');
    expect(result.warnings).toEqual([]);
    // The hash recorded is that of the prompt that produced the page.
    expect(result.promptHash).toBe(hashPrompt(visionPrompt({ maxTokens: 4096, temperature: 0.2 }, 'coverage')));
    expect(result.promptHash).not.toBe(hashPrompt(visionPrompt({ maxTokens: 4096, temperature: 0.2 })));
  });

  it('marks the page complex for low coverage when the re-ask does no better', async () => {
    const pdf = await makePdf(['coverage']);
    const partial = '<p>alpha beta gamma delta epsilon</p>';
    bedrockFake.next({ kind: 'text', text: partial }, { kind: 'text', text: '<p>alpha beta</p>' });
    const result = await backend().convertPage(pdf, 1, { textLayerText: textLayer, fallback: localFallback(1).fallback });
    expect(bedrockFake.requests).toHaveLength(2);
    expect(result.backend).toBe('chunked-vision');
    expect(result.classification).toBe('complex');
    expect(result.reasons).toEqual(['low-coverage']);
    expect(result.warnings).toEqual(["vision output covers 25% of the page's text layer words"]);
    expect(result.promptHash).toBe(hashPrompt(visionPrompt({ maxTokens: 4096, temperature: 0.2 })));
  });

  it('does not re-ask for a page without a text layer', async () => {
    const pdf = await makePdf(['scan']);
    bedrockFake.next({ kind: 'text', text: '<p>Words read from the picture</p>' });
    const result = await backend().convertPage(pdf, 1, { textLayerText: '', fallback: localFallback(1).fallback });
    expect(bedrockFake.requests).toHaveLength(1);
    expect(result).toMatchObject({ classification: 'standard', textLayerWords: 0 });
  });

  it('counts words with multiplicity, joins hyphenated line breaks and splits Han text into characters', () => {
    expect(textCoverage('the cat and the hat', 'the cat and hat')).toBeCloseTo(0.8);
    expect(textCoverage('acces-\nsible documents', 'accessible documents')).toBe(1);
    expect(textCoverage('ﬁnal', 'final')).toBe(1);
    expect(textCoverage('文字列', '文字')).toBeCloseTo(2 / 3);
    expect(textCoverage('', 'anything')).toBe(1);
  });
});

describe('vision backend: transport failures', () => {
  it('retries throttling with backoff and then uses the answer', async () => {
    const pdf = await makePdf(['throttled']);
    bedrockFake.next({ kind: 'error', type: 'ThrottlingException' }, { kind: 'error', type: 'ThrottlingException' }, { kind: 'text', text: GOOD_HTML });
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(pdf, 1, { textLayerText: TEXT_LAYER, fallback });
    expect(bedrockFake.requests).toHaveLength(3);
    expect(calls.count).toBe(0);
    expect(result.backend).toBe('chunked-vision');
  });

  it('retries 5xx a bounded number of times, then falls back to the local engine', async () => {
    const pdf = await makePdf(['down']);
    bedrockFake.respond(() => ({ kind: 'error', type: 'ServiceUnavailableException' }));
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(pdf, 1, { textLayerText: TEXT_LAYER, fallback });
    expect(bedrockFake.requests).toHaveLength(FAST_RETRY.maxAttempts);
    expect(calls.count).toBe(1);
    expect(result.backend).toBe('local');
    expect(result.warnings).toEqual(['vision model unavailable (ServiceUnavailableException); page converted by the local engine']);
  });

  it('retries an InternalServerException and a dropped connection alike', async () => {
    const pdf = await makePdf(['flaky']);
    bedrockFake.next({ kind: 'error', type: 'InternalServerException' }, { kind: 'drop' }, { kind: 'text', text: GOOD_HTML });
    const result = await backend().convertPage(pdf, 1, { textLayerText: TEXT_LAYER, fallback: localFallback(1).fallback });
    expect(bedrockFake.requests).toHaveLength(3);
    expect(result.backend).toBe('chunked-vision');
  });

  it('retries a call that outlives the request timeout', async () => {
    const pdf = await makePdf(['slow']);
    bedrockFake.next({ kind: 'text', text: GOOD_HTML, delayMs: 2000 }, { kind: 'text', text: GOOD_HTML });
    const result = await backend({}, { timeoutMs: 200 }).convertPage(pdf, 1, { textLayerText: TEXT_LAYER, fallback: localFallback(1).fallback });
    expect(bedrockFake.requests).toHaveLength(2);
    expect(result.backend).toBe('chunked-vision');
  });

  it('does not retry a ValidationException: one request, then the local engine', async () => {
    const pdf = await makePdf(['invalid']);
    bedrockFake.next({ kind: 'error', type: 'ValidationException', message: 'The model returned the following errors: Input is too long' });
    const { calls, fallback } = localFallback(1);
    const result = await backend().convertPage(pdf, 1, { textLayerText: TEXT_LAYER, fallback });
    expect(bedrockFake.requests).toHaveLength(1);
    expect(calls.count).toBe(1);
    expect(result.warnings[0]).toContain('ValidationException');
  });

  it('stops on abort instead of falling back', async () => {
    const pdf = await makePdf(['aborted']);
    const controller = new AbortController();
    bedrockFake.respond(() => {
      controller.abort(new Error('cancelled by user'));
      return { kind: 'error', type: 'ThrottlingException' };
    });
    const { calls, fallback } = localFallback(1);
    await expect(backend().convertPage(pdf, 1, { textLayerText: TEXT_LAYER, signal: controller.signal, fallback })).rejects.toThrow('cancelled by user');
    expect(calls.count).toBe(0);
    expect(bedrockFake.requests).toHaveLength(1);
  });
});

describe('prompt hash', () => {
  it('is the same for every page and independent of the page bytes, and changes with the prompt settings', async () => {
    const pdf = await makePdf(['one', 'two']);
    const vision = backend();
    const first = await vision.convertPage(pdf, 1, { textLayerText: '', fallback: localFallback(1).fallback });
    const second = await vision.convertPage(pdf, 2, { textLayerText: '', fallback: localFallback(2).fallback });
    const [a, b] = bedrockFake.requests;
    expect(a!.documents[0]!.bytes.equals(b!.documents[0]!.bytes)).toBe(false);
    expect(first.promptHash).toMatch(/^[0-9a-f]{64}$/);
    expect(second.promptHash).toBe(first.promptHash);

    const prompt = visionPrompt({ maxTokens: 4096, temperature: 0.2 });
    expect(hashPrompt(prompt)).toBe(first.promptHash);
    expect(hashPrompt({ ...prompt })).toBe(hashPrompt(prompt));
    expect(hashPrompt({ ...prompt, temperature: 0.3 })).not.toBe(hashPrompt(prompt));
    expect(hashPrompt({ ...prompt, maxTokens: 4097 })).not.toBe(hashPrompt(prompt));
    expect(hashPrompt({ ...prompt, text: `${prompt.text} ` })).not.toBe(hashPrompt(prompt));
    expect(hashPrompt({ ...prompt, system: `${prompt.system}.` })).not.toBe(hashPrompt(prompt));
  });

  it('accepts for reuse exactly the answers the on-demand path accepts', () => {
    expect(isAcceptableAnswer({ text: '<p>x</p>', stopReason: 'end_turn' })).toBe(true);
    expect(isAcceptableAnswer({ text: '<p>x</p>', stopReason: 'stop_sequence' })).toBe(true);
    expect(isAcceptableAnswer({ text: ' ', stopReason: 'end_turn' })).toBe(false);
    for (const stopReason of ['guardrail_intervened', 'content_filtered', 'max_tokens']) {
      expect(isAcceptableAnswer({ text: '<p>x</p>', stopReason })).toBe(false);
    }
  });
});

describe('htmlToBlocks', () => {
  it('drops scripts, styles, event handlers and unsafe links, and keeps the text of unknown elements', () => {
    const blocks = htmlToBlocks(
      `<div onclick="evil()"><style>.x{}</style><script>window.evil = 1</script>
       <p class="lead" style="color:red" onmouseover="evil()">Hello <a href="javascript:evil()">click</a> and <a href="https://example.org/a">go</a></p>
       <custom-widget>Kept <blink>text</blink></custom-widget>
       <iframe src="https://evil.example"></iframe><svg><script>x</script><text>chart</text></svg></div>`,
      3,
    );
    expect(blocks).toEqual([
      {
        kind: 'paragraph',
        page: 3,
        content: [
          { kind: 'text', text: 'Hello click and ' },
          { kind: 'link', href: 'https://example.org/a', children: [{ kind: 'text', text: 'go' }] },
        ],
      },
      { kind: 'paragraph', page: 3, content: [{ kind: 'text', text: 'Kept text' }] },
    ]);
    expect(JSON.stringify(blocks)).not.toMatch(/evil|color|chart/);
  });

  it('keeps headings, nested lists, emphasis, language changes, code, quotes and footnotes', () => {
    const blocks = htmlToBlocks(
      `<h2>Methods</h2>
       <ol start="3"><li>First <strong>step</strong><ul><li>detail</li></ul></li><li><p>Second</p><p>para</p></li></ol>
       <p>He said <span lang="fr">bonjour</span> with <code>x = 1</code><a role="doc-noteref" href="#fn-1">1</a>.</p>
       <blockquote><p>Quoted</p></blockquote>
       <pre>line 1
  line 2</pre>
       <aside role="doc-footnote" id="fn-1">1 A footnote.</aside>`,
      4,
    );
    expect(blocks).toEqual([
      { kind: 'heading', page: 4, level: 2, content: [{ kind: 'text', text: 'Methods' }] },
      {
        kind: 'list',
        page: 4,
        ordered: true,
        start: 3,
        items: [
          {
            content: [
              { kind: 'text', text: 'First ' },
              { kind: 'emphasis', strong: true, children: [{ kind: 'text', text: 'step' }] },
            ],
            children: { kind: 'list', page: 4, ordered: false, items: [{ content: [{ kind: 'text', text: 'detail' }] }] },
          },
          { content: [{ kind: 'text', text: 'Second' }, { kind: 'lineBreak' }, { kind: 'text', text: 'para' }] },
        ],
      },
      {
        kind: 'paragraph',
        page: 4,
        content: [
          { kind: 'text', text: 'He said ' },
          { kind: 'lang', lang: 'fr', children: [{ kind: 'text', text: 'bonjour' }] },
          { kind: 'text', text: ' with ' },
          { kind: 'code', text: 'x = 1' },
          { kind: 'footnoteRef', id: 'p4-fn-1', label: '1' },
          { kind: 'text', text: '.' },
        ],
      },
      { kind: 'blockquote', page: 4, children: [{ kind: 'paragraph', page: 4, content: [{ kind: 'text', text: 'Quoted' }] }] },
      { kind: 'code', page: 4, text: 'line 1\n  line 2' },
      { kind: 'footnote', page: 4, id: 'p4-fn-1', label: '1', content: [{ kind: 'text', text: '1 A footnote.' }] },
    ]);
  });

  it("carries a block element's lang into its content and keeps spaces outside emphasis", () => {
    const blocks = htmlToBlocks(`<h1 lang="de">Bericht</h1><div lang="fr"><p>Bonjour</p></div><p>Say<em> hello </em>now</p>`, 1);
    expect(blocks).toEqual([
      { kind: 'heading', page: 1, level: 1, content: [{ kind: 'lang', lang: 'de', children: [{ kind: 'text', text: 'Bericht' }] }] },
      { kind: 'paragraph', page: 1, content: [{ kind: 'lang', lang: 'fr', children: [{ kind: 'text', text: 'Bonjour' }] }] },
      {
        kind: 'paragraph',
        page: 1,
        content: [
          { kind: 'text', text: 'Say ' },
          { kind: 'emphasis', children: [{ kind: 'text', text: 'hello' }] },
          { kind: 'text', text: ' now' },
        ],
      },
    ]);
  });

  it('keeps tables with caption, header scopes (given or inferred) and spans', () => {
    const [table] = htmlToBlocks(
      `<table><caption>Results <em>2024</em></caption>
        <thead><tr><th></th><th colspan="2" scope="colgroup">Sales</th></tr></thead>
        <tbody><tr><th>North</th><td rowspan="2">1</td><td>2</td></tr><tr><th scope="row">South</th><td>3</td></tr></tbody>
       </table>`,
      1,
    );
    expect(table).toEqual({
      kind: 'table',
      page: 1,
      caption: [
        { kind: 'text', text: 'Results ' },
        { kind: 'emphasis', children: [{ kind: 'text', text: '2024' }] },
      ],
      rows: [
        [
          { header: true, scope: 'col', content: [] },
          { header: true, scope: 'colgroup', colSpan: 2, content: [{ kind: 'text', text: 'Sales' }] },
        ],
        [
          { header: true, scope: 'row', content: [{ kind: 'text', text: 'North' }] },
          { header: false, rowSpan: 2, content: [{ kind: 'text', text: '1' }] },
          { header: false, content: [{ kind: 'text', text: '2' }] },
        ],
        [
          { header: true, scope: 'row', content: [{ kind: 'text', text: 'South' }] },
          { header: false, content: [{ kind: 'text', text: '3' }] },
        ],
      ],
    });
  });

  it('keeps figures with alt and caption, decorative images, and flags images without alt', () => {
    const blocks = htmlToBlocks(
      `<figure><img src="chart.png" alt="Revenue doubled" onerror="evil()"><figcaption>Figure 2: Revenue</figcaption></figure>
       <img src="rule.png" alt="">
       <p>Logo <img src="logo.png"> here</p>
       <figure><table><tr><th>A</th></tr><tr><td>1</td></tr></table><figcaption>Table 1</figcaption></figure>`,
      2,
    );
    expect(blocks).toEqual([
      { kind: 'figure', page: 2, alt: 'Revenue doubled', caption: [{ kind: 'text', text: 'Figure 2: Revenue' }], decorative: false, needsAlt: false },
      { kind: 'figure', page: 2, decorative: true, needsAlt: false },
      { kind: 'paragraph', page: 2, content: [{ kind: 'text', text: 'Logo here' }] },
      { kind: 'figure', page: 2, decorative: false, needsAlt: true },
      {
        kind: 'table',
        page: 2,
        caption: [{ kind: 'text', text: 'Table 1' }],
        rows: [[{ header: true, scope: 'col', content: [{ kind: 'text', text: 'A' }] }], [{ header: false, content: [{ kind: 'text', text: '1' }] }]],
      },
    ]);
  });

  it('keeps MathML (allow-listed) with its TeX annotation, and turns inline math into text', () => {
    const blocks = htmlToBlocks(
      `<p><math display="block" onclick="evil()"><semantics><mrow><msup><mi>x</mi><mn>2</mn></msup><mo>&lt;</mo><mn>1</mn></mrow>
         <annotation encoding="application/x-tex">x^2 &lt; 1</annotation></semantics><script>evil()</script></math></p>
       <p>Let <math><mi>y</mi></math> be given.</p>`,
      1,
    );
    expect(blocks[0]).toEqual({
      kind: 'formula',
      page: 1,
      display: true,
      tex: 'x^2 < 1',
      text: 'x 2 < 1',
      mathml:
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><msup><mi>x</mi><mn>2</mn></msup><mo>&lt;</mo><mn>1</mn></mrow>\n         <annotation encoding="application/x-tex">x^2 &lt; 1</annotation></semantics></math>',
    });
    expect(blocks[1]).toEqual({ kind: 'paragraph', page: 1, content: [{ kind: 'text', text: 'Let y be given.' }] });
  });
});
