import http from 'node:http';
import { listen, readRequest } from './fake-server.ts';

/**
 * A local Telegram Bot API: POST /bot<token>/sendMessage with {chat_id, text}
 * answers {ok: true, result: {message_id, chat, text}}; a wrong token answers
 * 401 {ok: false, error_code: 401, description: 'Unauthorized'} as Telegram does.
 * `failNext(n)` makes the next n calls answer 500.
 */
export type MessengerFake = {
  url: string;
  messages: { token: string; chatId: unknown; text: string }[];
  failNext: (count: number) => void;
  reset: () => void;
  close: () => Promise<void>;
};

export async function startMessengerFake(options: { token: string }): Promise<MessengerFake> {
  const messages: MessengerFake['messages'] = [];
  let failures = 0;
  let nextId = 1;
  const server = http.createServer(async (req, res) => {
    const request = await readRequest(req);
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const match = /^\/bot([^/]+)\/sendMessage$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return answer(404, { ok: false, error_code: 404, description: 'Not Found' });
    if (match[1] !== options.token) return answer(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    if (failures > 0) {
      failures--;
      return answer(500, { ok: false, error_code: 500, description: 'Internal Server Error' });
    }
    if (typeof request.json !== 'object' || request.json === null)
      return answer(400, { ok: false, error_code: 400, description: "Bad Request: can't parse JSON" });
    const body = request.json as { chat_id?: unknown; text?: unknown };
    if (body.chat_id === undefined || typeof body.text !== 'string' || !body.text) {
      return answer(400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
    }
    messages.push({ token: match[1]!, chatId: body.chat_id, text: body.text });
    answer(200, {
      ok: true,
      result: { message_id: nextId++, date: Math.floor(Date.now() / 1000), chat: { id: body.chat_id, type: 'private' }, text: body.text },
    });
  });
  const { url, close } = await listen(server);
  return {
    url,
    messages,
    failNext: (count) => (failures = count),
    reset: () => {
      messages.length = 0;
      failures = 0;
    },
    close,
  };
}
