import { expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.ts';
import { api, uploadPdf } from '../service/harness.ts';

const app = await startTestApp();

it('a stream open on a file that is deleted says so and closes', async () => {
  const token = await app.token('deleter@example.com');
  const fileId = await uploadPdf(app, token);
  const response = await fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  // the first event (the file's state) comes after the stream has subscribed: the delete cannot slip in before
  while (!text.includes('event: progress')) text += decoder.decode((await reader.read()).value);
  expect((await api(app, token, 'DELETE', `/api/files/${fileId}`)).status).toBe(200);
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value);
    }
  })();
  const ended = await Promise.race([rest, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), 15_000))]);
  expect(ended).not.toBe('still open');
  expect(text).toMatch(/event: cancelled\ndata: \{"fileId":"[^"]+","reason":"deleted"\}/);
  if (ended === 'still open') await reader.cancel();
}, 60_000);
