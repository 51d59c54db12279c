import fs from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { verifyWebhook, type VerifyWebhookResult } from '../../client-sdk/verify-webhook.ts';

/**
 * A customer's webhook receiver: HTTPS on loopback with a self-signed
 * certificate (test/fixtures/webhooks), recording every request with its raw
 * body. Tests script the next answers; once the script is used up it answers
 * as a real receiver would: given `secrets`, it verifies each delivery with
 * the SDK helper and answers 400 when that fails, else 200.
 */
type ReceiverAnswer =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Answers (status, default 200) only after `ms`. */
  | { kind: 'delay'; ms: number; status?: number }
  /** Destroys the connection without answering. */
  | { kind: 'drop' };

export type ReceivedRequest = {
  /** performance.now() when the body had arrived */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  verification?: VerifyWebhookResult;
};

export type WebhookReceiver = {
  /** https://127.0.0.1:<port><path> */
  url: (path?: string) => string;
  port: number;
  requests: ReceivedRequest[];
  next: (...answers: ReceiverAnswer[]) => void;
  always: (answer: ReceiverAnswer | undefined) => void;
  /** The secrets this receiver verifies with (a rotation test gives receivers different ones). */
  setSecrets: (secrets: string[] | undefined) => void;
  /** Resolves once `count` requests arrived (bounded wait). */
  waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  reset: () => void;
  close: () => Promise<void>;
};

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/webhooks/${name}`, import.meta.url));

export async function startWebhookReceiver(
  options: { secrets?: string[]; host?: string; onRequest?: (request: ReceivedRequest) => void } = {},
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const script: ReceiverAnswer[] = [];
  let standing: ReceiverAnswer | undefined;
  let secrets = options.secrets;
  const sockets = new Set<Duplex>();
  const waiters = new Set<() => void>();

  const server = https.createServer({ key: fixture('receiver-key.pem'), cert: fixture('receiver-cert.pem') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request: ReceivedRequest = { at: performance.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      if (secrets) request.verification = await verifyWebhook(body, req.headers, secrets);
      requests.push(request);
      options.onRequest?.(request);
      for (const wake of waiters) wake();
      const answer = script.shift() ?? standing;
      if (answer?.kind === 'drop') return req.socket.destroy();
      if (answer?.kind === 'delay') {
        const timer = setTimeout(() => res.writeHead(answer.status ?? 200).end('late'), answer.ms);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (answer?.kind === 'status') return res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      if (request.verification && !request.verification.ok) return res.writeHead(400, { 'content-type': 'text/plain' }).end(request.verification.message);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: (path = '/hook') => `https://${options.host ?? '127.0.0.1'}:${port}${path}`,
    port,
    requests,
    next: (...answers) => void script.push(...answers),
    always: (answer) => void (standing = answer),
    setSecrets: (next) => void (secrets = next),
    waitFor: async (count, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${requests.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 50);
          waiters.add(wake);
        });
      }
      return requests;
    },
    reset: () => {
      requests.length = 0;
      script.length = 0;
      standing = undefined;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
