import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import type { ConversionEngine } from '../../server/conversion/engine.ts';
import { createLog } from '../../server/log.ts';
import { startTestApp } from '../helpers/app.ts';
import { THREE_PAGES, upload } from '../service/harness.ts';
import { until } from '../helpers/wait.ts';

const lines: Array<Record<string, unknown>> = [];
const log = createLog({
  level: 'info',
  destination: new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  }),
});
// an engine that fails the way a bug would: a plain Error, no code
const broken = async () => ({ inspect: () => Promise.reject(new Error('the inspector fell over')) }) as unknown as ConversionEngine;
const app = await startTestApp({ log, engine: () => broken });

it('a 500 from the upload route logs its cause under the request id the response carries', async () => {
  const token = await app.token('five-hundred@example.com');
  const response = await upload(app, token, THREE_PAGES);
  expect(response.status).toBe(500);
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(await response.json()).toMatchObject({ code: 'INTERNAL', requestId });
  // the line is written when the response finishes, just after the client has it
  const logged = await until(
    async () => lines.find((line) => line.requestId === requestId && line.level === 50),
    (line) => line !== undefined,
    5_000,
    'the error line',
  );
  expect(logged).toMatchObject({ status: 500, err: { message: 'the inspector fell over' } });
});
