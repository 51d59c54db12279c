import type http from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * What the local fakes share: listening on a free loopback port, reading a
 * request whole, a script of answers, and an answer that comes late. Each
 * fake keeps only its provider's wire format.
 */

export type RecordedRequest = { method: string; path: string; headers: http.IncomingHttpHeaders; body: string; json: unknown };

/** The controls a scripted fake offers a test. */
export type ScriptedFake<Answer> = {
  url: string;
  requests: RecordedRequest[];
  /** Queues answers for the next requests, in order. */
  next: (...answers: Answer[]) => void;
  /** Answers every request with this until cleared (undefined). */
  always: (answer: Answer | undefined) => void;
  reset: () => void;
  close: () => Promise<void>;
};

export type ListeningFake = { port: number; url: string; close: () => Promise<void> };

/** Listens on a free port; `close` ends the keep-alive connections a client left open, so a test never hangs on them. */
export async function listen(server: Server, host = '127.0.0.1', scheme = 'http'): Promise<ListeningFake> {
  const sockets = new Set<Duplex>();
  server.on('connection', (socket: Duplex) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `${scheme}://${host}:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Readable = { method?: string; url?: string; headers: http.IncomingHttpHeaders; on(event: 'data' | 'end', listener: (chunk: Buffer) => void): unknown };

/** Reads a request's body whole; `json` is its parsed body, or undefined when it is not JSON. */
export function readRequest(req: Readable): Promise<RecordedRequest> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json });
    });
  });
}

/** Answers after `ms`, unless the client has gone away by then (a client with a shorter timeout gives up first). */
export function answerLater(res: { destroyed: boolean; on(event: 'close', listener: () => void): unknown }, ms: number, answer: () => void): void {
  const timer = setTimeout(() => {
    if (!res.destroyed) answer();
  }, ms);
  res.on('close', () => clearTimeout(timer));
}

/** The answers a test scripts: `next` queues them for the next requests, in order; `always` answers once the queue is empty. */
export function answerScript<Answer>() {
  const queue: Answer[] = [];
  let standing: Answer | undefined;
  return {
    next: (...answers: Answer[]) => void queue.push(...answers),
    always: (answer: Answer | undefined) => void (standing = answer),
    take: (): Answer | undefined => queue.shift() ?? standing,
    clear: () => {
      queue.length = 0;
      standing = undefined;
    },
  };
}
