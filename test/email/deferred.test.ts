import { beforeEach, describe, expect, it } from 'vitest';
import { registerEmailJobs, handleDeadLetteredSend, handleDeferredSend } from '../../jobs/email/deferred-send.worker.ts';
import { loadConfig } from '../../server/config.ts';
import { deferQueueNames, type DeferredSend } from '../../server/email/email.jobs.ts';
import { PAST_TIMEOUT_MS, startEmailHarness, suppress } from './harness.ts';
import { eventually } from '../helpers/wait.ts';

const harness = await startEmailHarness();
const QUEUE = 'email-deferred';
const DEAD_LETTER = `${QUEUE}.dead-letter`;
const env = { EMAIL_DEFER_QUEUE: QUEUE };
const message = { category: 'transactional' as const, to: 'reader@example.com', subject: 'Your file is ready', text: 'Hello' };

beforeEach(async () => {
  await harness.reset();
  for (const queue of [QUEUE, DEAD_LETTER]) {
    if (await harness.boss.getQueue(queue)) await harness.boss.deleteAllJobs(queue);
  }
});

/** The next job on the queue whatever its startAfter: the test plays the clock by taking it now. */
async function takeJob(queue = QUEUE) {
  const [job] = await harness.boss.fetch<DeferredSend>(queue, { ignoreStartAfter: true, includeMetadata: true });
  return job;
}

function delaySeconds(job: { startAfter: Date; createdOn: Date }) {
  return Math.round((job.startAfter.getTime() - job.createdOn.getTime()) / 1000);
}

describe('deferred retry', () => {
  it('defers an ambiguous timeout, and the same-key retry yields exactly one delivered message', async () => {
    const { email, deps } = harness.library(env);
    harness.resend.next({ kind: 'delay', ms: PAST_TIMEOUT_MS });
    const result = await email.send(message);
    expect(result).toEqual({ status: 'deferred', ok: true, provider: 'provider_a', failedOver: false, id: expect.any(String) });
    // Resend took the message; we only never heard back.
    expect(harness.resend.delivered).toHaveLength(1);

    const job = (await takeJob())!;
    expect(delaySeconds(job)).toBe(120);
    expect(job.data).toMatchObject({ attempt: 2, correlationId: result.id, failedOver: false, request: { provider: 'provider_a', idempotencyKey: result.id } });

    const retry = await handleDeferredSend(email, job);
    await harness.boss.complete(QUEUE, job.id);
    expect(retry).toMatchObject({ status: 'sent', ok: true, provider: 'provider_a', providerMessageId: harness.resend.delivered[0]!.id });
    expect(harness.resend.delivered).toHaveLength(1);
    const [first, second] = harness.resend.requests;
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(second!.body).toBe(first!.body);

    const rows = await harness.rows();
    expect(rows.map((row) => [row.attempt, row.status, row.idempotency_key, row.error_kind])).toEqual([
      [1, 'deferred', result.id, 'ambiguous'],
      [2, 'sent', result.id, null],
    ]);
    expect(rows[1]!.tags).toMatchObject({ folio_log_id: result.id });
    expect((await deps.metrics.emailDeferred.get()).values[0]!.value).toBe(1);
  });

  it('retries after 2, then 10, then 15 minutes, then logs failed (defer failed)', async () => {
    const { email } = harness.library(env);
    harness.resend.always({ kind: 'error', status: 500 });
    expect(await email.send({ ...message, idempotencyKey: 'digest/7' })).toMatchObject({ status: 'deferred' });
    const results = [];
    for (const expected of [120, 600, 900]) {
      const job = (await takeJob())!;
      expect(delaySeconds(job)).toBe(expected);
      results.push(await handleDeferredSend(email, job));
      await harness.boss.complete(QUEUE, job.id);
    }
    expect(results.map((result) => result.status)).toEqual(['deferred', 'deferred', 'failed']);
    expect(results[2]).toMatchObject({ errorKind: 'ambiguous', error: expect.stringMatching(/^defer failed: provider_a application_error \(500\)/) });
    expect(await takeJob()).toBeUndefined();
    const rows = await harness.rows();
    expect(rows.map((row) => [row.attempt, row.status, row.idempotency_key])).toEqual([
      [1, 'deferred', 'digest/7'],
      [2, 'deferred', 'digest/7'],
      [3, 'deferred', 'digest/7'],
      [4, 'failed', 'digest/7'],
    ]);
    expect(new Set(harness.resend.requests.map((request) => request.body)).size).toBe(1);
  });

  it('makes a retry that fails final, and never fails it over (same provider)', async () => {
    const { email } = harness.library({ ...env, EMAIL_FALLBACK: 'provider_b' });
    harness.resend.next({ kind: 'error', status: 502 }, { kind: 'error', status: 503 });
    expect(await email.send(message)).toMatchObject({ status: 'deferred', provider: 'provider_a' });
    const job = (await takeJob())!;
    expect(await handleDeferredSend(email, job)).toMatchObject({ status: 'failed', errorKind: 'unavailable', provider: 'provider_a' });
    expect(harness.ses.requests).toHaveLength(0);
    expect(await takeJob()).toBeUndefined();
  });

  it('makes a retry that is suppressed final', async () => {
    const { email } = harness.library(env);
    harness.resend.next({ kind: 'drop' });
    expect(await email.send(message)).toMatchObject({ status: 'deferred' });
    await suppress(harness, 'reader@example.com', 'complaint');
    expect(await handleDeferredSend(email, (await takeJob())!)).toMatchObject({ status: 'suppressed', error: 'Recipient suppressed: complaint' });
    expect(await takeJob()).toBeUndefined();
    expect(harness.resend.requests).toHaveLength(1);
  });

  it('pins the retry of a failed-over send to the fallback and keeps failed_over', async () => {
    const { email } = harness.library({ ...env, EMAIL_FALLBACK: 'provider_b' });
    harness.resend.next({ kind: 'error', status: 429 });
    harness.ses.next({ kind: 'status', status: 500 });
    expect(await email.send(message)).toMatchObject({ status: 'deferred', provider: 'provider_b', failedOver: true });
    const job = (await takeJob())!;
    expect(job.data.request.provider).toBe('provider_b');
    expect(await handleDeferredSend(email, job)).toMatchObject({ status: 'sent', provider: 'provider_b', failedOver: true });
    expect(harness.resend.requests).toHaveLength(1);
    expect(harness.ses.delivered).toHaveLength(1);
    expect((await harness.rows()).map((row) => [row.status, row.provider, row.failed_over])).toEqual([
      ['deferred', 'provider_b', true],
      ['sent', 'provider_b', true],
    ]);
  });

  it('fails a message over about 250 KB at once instead of queueing it', async () => {
    const { email } = harness.library(env);
    harness.resend.next({ kind: 'error', status: 504 });
    const big = Buffer.alloc(200 * 1024, 7); // 200 KB of bytes is about 270 KB of base64
    const result = await email.send({ ...message, attachments: [{ filename: 'big.bin', content: big }] });
    expect(result).toMatchObject({ status: 'failed', ok: false, errorKind: 'ambiguous', error: expect.stringContaining('message too large to defer') });
    expect(await takeJob()).toBeUndefined();
    expect(await harness.rows()).toEqual([expect.objectContaining({ status: 'failed', error_kind: 'ambiguous' })]);
  });

  it('queues attachments as base64 and resends them unchanged', async () => {
    const { email } = harness.library(env);
    harness.resend.next({ kind: 'error', status: 500 });
    await email.send({ ...message, attachments: [{ filename: 'page.html', content: Buffer.from('<p>hi</p>'), contentType: 'text/html' }] });
    const job = (await takeJob())!;
    expect(job.data.request.attachments).toEqual([{ filename: 'page.html', content: Buffer.from('<p>hi</p>').toString('base64'), contentType: 'text/html' }]);
    expect(await handleDeferredSend(email, job)).toMatchObject({ status: 'sent' });
    expect(harness.resend.requests[1]!.body).toBe(harness.resend.requests[0]!.body);
  });

  it('sends a crashed receive again and dead-letters it after the third receive', async () => {
    const { email, deps } = harness.library(env);
    harness.resend.next({ kind: 'error', status: 500 });
    const result = await email.send(message);
    const receives = [];
    for (let receive = 1; receive <= 3; receive++) {
      const job = (await takeJob())!;
      receives.push(job.id);
      await harness.boss.fail(QUEUE, job.id, { message: 'worker crashed' });
    }
    expect(new Set(receives).size).toBe(1);
    expect(await takeJob()).toBeUndefined();
    const dead = (await takeJob(DEAD_LETTER))!;
    expect(dead.data).toMatchObject({ correlationId: result.id, attempt: 2 });

    // Twice, as at-least-once delivery may: counted each time, logged once.
    await handleDeadLetteredSend(deps, email, dead);
    await handleDeadLetteredSend(deps, email, dead);
    expect((await deps.metrics.emailDeferredDeadLetters.get()).values[0]!.value).toBe(2);
    expect(harness.logs.filter((line) => line.event === 'email_deferred_dead_letter')).toHaveLength(2);
    const rows = await harness.rows();
    expect(rows.map((row) => [row.attempt, row.status, row.error])).toEqual([
      [1, 'deferred', expect.stringContaining('(500)')],
      [2, 'failed', 'defer dead-lettered after 3 receives'],
    ]);
    expect(rows[1]).toMatchObject({ idempotency_key: result.id, to_addresses: ['reader@example.com'], error_kind: 'ambiguous' });
  });

  it('gives the same result when a retry runs twice', async () => {
    const { email } = harness.library(env);
    harness.resend.next({ kind: 'error', status: 500 }, { kind: 'error', status: 500 }, { kind: 'error', status: 500 });
    await email.send(message);
    const job = (await takeJob())!;
    // Ambiguous twice: the next retry is queued once.
    expect(await handleDeferredSend(email, job)).toMatchObject({ status: 'deferred' });
    expect(await handleDeferredSend(email, job)).toMatchObject({ status: 'deferred' });
    const next = (await takeJob())!;
    expect(await takeJob()).toBeUndefined();
    // Accepted twice: one message, one row.
    const first = await handleDeferredSend(email, next);
    const second = await handleDeferredSend(email, next);
    expect(second).toEqual(first);
    expect(harness.resend.delivered).toHaveLength(1);
    expect((await harness.rows()).map((row) => [row.attempt, row.status])).toEqual([
      [1, 'deferred'],
      [2, 'deferred'],
      [3, 'sent'],
    ]);
  });

  it('is picked up by the registered worker', async () => {
    const { deps } = harness.library(env);
    await registerEmailJobs(deps);
    try {
      const correlationId = crypto.randomUUID();
      const job: DeferredSend = {
        request: { ...message, provider: 'provider_a', idempotencyKey: 'worker-test' },
        correlationId,
        attempt: 2,
        failedOver: false,
      };
      await harness.boss.send(QUEUE, job);
      const row = await eventually(async () => (await harness.rows()).find((candidate) => candidate.attempt === 2 && candidate.status === 'sent'), 10_000);
      expect(row).toMatchObject({ idempotency_key: 'worker-test', tags: { folio_log_id: correlationId } });
      expect(harness.resend.delivered).toHaveLength(1);
    } finally {
      await harness.boss.offWork(QUEUE);
      await harness.boss.offWork(DEAD_LETTER);
    }
  });
});

describe('defer queue configuration', () => {
  it('takes EMAIL_DEFER_QUEUE as a queue name, accepts EMAIL_DEFER_QUEUE_URL, and is off without either', () => {
    expect(deferQueueNames(loadConfig({ EMAIL_DEFER_QUEUE: 'mail-retry' }))).toEqual({ queue: 'mail-retry', deadLetter: 'mail-retry.dead-letter' });
    expect(deferQueueNames(loadConfig({ EMAIL_DEFER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/email-defer' }))?.queue).toBe('email-defer');
    expect(deferQueueNames(loadConfig({}))).toBeUndefined();
  });

  it('without a queue, an ambiguous send is failed with error_kind ambiguous', async () => {
    const { email } = harness.library();
    harness.resend.next({ kind: 'error', status: 500 });
    expect(await email.send(message)).toMatchObject({ status: 'failed', errorKind: 'ambiguous' });
    expect(await harness.rows()).toEqual([expect.objectContaining({ status: 'failed', error_kind: 'ambiguous' })]);
  });
});
