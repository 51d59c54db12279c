import fs from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { verifyWebhook, type VerifyWebhookResult } from '../../client-sdk/verify-webhook.ts';
import { until } from '../helpers/wait.ts';
import { answerLater, answerScript, listen, readRequest } from './fake-server.ts';

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
  const script = answerScript<ReceiverAnswer>();
  let secrets = options.secrets;

  const server = https.createServer({ key: fixture('receiver-key.pem'), cert: fixture('receiver-cert.pem') }, async (req, res) => {
    const { body } = await readRequest(req);
    const request: ReceivedRequest = { at: performance.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    if (secrets) request.verification = await verifyWebhook(body, req.headers, secrets);
    requests.push(request);
    options.onRequest?.(request);
    const answer = script.take();
    if (answer?.kind === 'drop') return req.socket.destroy();
    if (answer?.kind === 'delay') return answerLater(res, answer.ms, () => res.writeHead(answer.status ?? 200).end('late'));
    if (answer?.kind === 'status') return res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
    if (request.verification && !request.verification.ok) return res.writeHead(400, { 'content-type': 'text/plain' }).end(request.verification.message);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  });
  const { port, close } = await listen(server, options.host);

  return {
    url: (path = '/hook') => `https://${options.host ?? '127.0.0.1'}:${port}${path}`,
    port,
    requests,
    next: script.next,
    always: script.always,
    setSecrets: (next) => void (secrets = next),
    waitFor: (count, timeoutMs = 10_000) =>
      until(
        () => requests,
        (received) => received.length >= count,
        timeoutMs,
        `${count} requests at the receiver`,
      ),
    reset: () => {
      requests.length = 0;
      script.clear();
    },
    close,
  };
}
