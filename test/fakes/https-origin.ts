import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from './fake-server.ts';

/**
 * A web server a customer's import URL points at: HTTPS on loopback with the
 * suite's self-signed certificate (test/fixtures/webhooks). Each test mounts
 * its answers by path; every request is recorded, and how many body bytes a
 * streamed answer got out before the client hung up.
 */
export type OriginRoute = (req: IncomingMessage, res: ServerResponse) => void;

export type HttpsOrigin = {
  /** https://127.0.0.1:<port><path> */
  url: (path: string) => string;
  port: number;
  route: (path: string, handler: OriginRoute) => void;
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers'] }>;
  /** Bytes written by `endless` answers, by path, until the client closed the connection. */
  streamed: Map<string, { bytes: number; closed: boolean }>;
  close: () => Promise<void>;
};

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/webhooks/${name}`, import.meta.url));

export async function startHttpsOrigin(): Promise<HttpsOrigin> {
  const routes = new Map<string, OriginRoute>();
  const requests: HttpsOrigin['requests'] = [];
  const streamed: HttpsOrigin['streamed'] = new Map();
  const server = https.createServer({ key: fixture('receiver-key.pem'), cert: fixture('receiver-cert.pem') }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push({ method: req.method ?? '', path, headers: req.headers });
    const handler = routes.get(path);
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    handler(req, res);
  });
  const listening = await listen(server, '127.0.0.1', 'https');
  return {
    url: (path) => `${listening.url}${path}`,
    port: listening.port,
    route: (path, handler) => void routes.set(path, handler),
    requests,
    streamed,
    close: listening.close,
  };
}

/** An answer that never ends: 64 KB chunks of `%PDF-` then zeros, as fast as the client reads, counted in `origin.streamed`. */
export function endless(origin: HttpsOrigin, path: string): OriginRoute {
  return (_req, res) => {
    const record = { bytes: 0, closed: false };
    origin.streamed.set(path, record);
    res.writeHead(200, { 'content-type': 'application/pdf' });
    const chunk = Buffer.alloc(64 * 1024);
    Buffer.from('%PDF-1.7\n').copy(chunk);
    const zeros = Buffer.alloc(64 * 1024);
    let first = true;
    const pump = () => {
      while (!record.closed) {
        const ok = res.write(first ? chunk : zeros);
        record.bytes += chunk.length;
        first = false;
        if (!ok) return void res.once('drain', pump);
      }
    };
    res.on('close', () => (record.closed = true));
    pump();
  };
}
