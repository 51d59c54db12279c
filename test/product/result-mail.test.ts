import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { registerResultMailJobs } from '../../jobs/result-mail/result-mail.worker.ts';
import { registerWebhookJobs } from '../../jobs/webhooks/webhooks.worker.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { sendResultMail } from '../../server/result-mail/send-result-mail.ts';
import { uploadPdf } from '../service/harness.ts';
import { until } from '../helpers/wait.ts';
import { seedConvertedFile, startProductHarness } from './harness.ts';

const { app, resend, call, signIn } = await startProductHarness({
  workers: true,
  env: { CHUNK_PAGES: '3', CHUNK_CONCURRENCY: '1', CONVERSION_POOL_SIZE: '1' },
});
const db = app.database.db;

beforeAll(async () => {
  await registerConversionJobs(app.deps, { schedule: false });
  await registerWebhookJobs(app.deps, { schedule: false });
  await registerResultMailJobs(app.deps);
}, 60_000);

type Mail = { to: string[]; subject: string; text: string };
const mailsTo = (address: string) => resend.delivered.map((message) => message.body as Mail).filter((mail) => mail.to.includes(address));
const mailRow = (fileId: string) =>
  db.maybeOne(sql.type(z.object({ status: z.string() }))`select status from conversion_result_mails where file_id = ${fileId}`);

async function optIn(token: string) {
  const answer = await call('PATCH', '/api/me/settings', { token, body: { conversionResultEmail: true } });
  expect(answer).toMatchObject({ status: 200, body: { conversionResultEmail: true } });
}

async function outboxEvent(type: 'conversion.completed' | 'conversion.failed', fileId: string, payload: Record<string, unknown>) {
  return db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    insert into outbox_events (type, aggregate_id, payload) values (${type}, ${fileId}, ${sql.jsonb(payload as never)}) returning id`);
}

describe('account settings', () => {
  it('is off by default, changes through PATCH /api/me/settings and refuses unknown settings', async () => {
    const user = await signIn('settings@example.com');
    expect((await call('GET', '/api/me/settings', { token: user.token })).body).toEqual({ conversionResultEmail: false });
    await optIn(user.token);
    expect((await call('PATCH', '/api/me/settings', { token: user.token, body: {} })).body).toEqual({ conversionResultEmail: true });
    expect((await call('PATCH', '/api/me/settings', { token: user.token, body: { conversionResultEmail: 'yes' } })).status).toBe(400);
    expect((await call('PATCH', '/api/me/settings', { token: user.token, body: { marketing: true } })).status).toBe(400);
    expect((await call('GET', '/api/me/settings')).status).toBe(401);
  });
});

describe('conversion result mail', () => {
  it('mails an opted-in owner when an uploaded PDF is converted: the 24-hour download link and the report summary', async () => {
    const owner = await signIn('converts@example.com');
    await optIn(owner.token);
    const fileId = await uploadPdf(app, owner.token);
    expect((await call('POST', `/api/convert/${fileId}`, { token: owner.token, body: {} })).status).toBe(200);
    await until(
      () => mailRow(fileId),
      (row) => row?.status === 'sent',
      120_000,
      'result mail',
    );
    const [mail] = mailsTo('converts@example.com');
    expect(mail!.subject).toBe('Converted: multicolumn-latex');
    expect(mail!.text).toContain('Pages: 3');
    expect(mail!.text).toMatch(/Accessibility check \(WCAG\): (passed|failed)/);
    expect(mail!.text).toContain('Credits charged: 3');
    const link = /https:\/\/folio\.example(\/api\/download\/\S+)/.exec(mail!.text)![1]!;
    const zip = await fetch(`${app.baseUrl}${link}`);
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toContain('zip');
    const log = await db.one(sql.type(z.object({ category: z.string(), source: z.string() }))`
      select category, source from email_log where to_addresses @> array['converts@example.com']`);
    expect(log).toEqual({ category: 'notification', source: 'api:conversion-result' });
  }, 150_000);

  it('mails a failure with its reason', async () => {
    const owner = await signIn('fails@example.com');
    await optIn(owner.token);
    const { fileId, jobId } = await seedConvertedFile(app, owner.id, { name: 'Broken.pdf' });
    await outboxEvent('conversion.failed', fileId, { fileId, jobId, userId: owner.id, code: 'PDF_MALFORMED', message: 'The PDF is damaged' });
    await until(
      () => mailRow(fileId),
      (row) => row?.status === 'sent',
      30_000,
      'failure mail',
    );
    const [mail] = mailsTo('fails@example.com');
    expect(mail!.subject).toBe('Conversion failed: Broken');
    expect(mail!.text).toContain('We could not convert Broken.pdf: The PDF is damaged (PDF_MALFORMED).');
    expect(mail!.text).toContain('No credits were charged');
  });

  it('mails nobody who did not opt in, and never for a conversion started by email', async () => {
    const quiet = await signIn('quiet@example.com');
    const quietFile = await seedConvertedFile(app, quiet.id);
    await outboxEvent('conversion.completed', quietFile.fileId, { fileId: quietFile.fileId, jobId: quietFile.jobId, userId: quiet.id, pages: 2 });

    const mailer = await signIn('mailer@example.com');
    await optIn(mailer.token);
    const mailed = await seedConvertedFile(app, mailer.id);
    await db.query(sql.type(AnyRow)`
      insert into intake_messages (id, source, dedupe_key, size_bytes, sender_email, file_id, status)
      values (${randomUUID()}, 'smtp', ${randomUUID()}, 100, 'mailer@example.com', ${mailed.fileId}, 'replied')`);
    await outboxEvent('conversion.completed', mailed.fileId, { fileId: mailed.fileId, jobId: mailed.jobId, userId: mailer.id, pages: 2 });

    // The opted-in owner's event is queued and skipped; the other's is not even queued.
    await until(
      () => mailRow(mailed.fileId),
      (row) => row?.status === 'skipped',
      30_000,
      'skip',
    );
    await until(
      () => db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from outbox_events where dispatched_at is null`),
      (n) => n === 0,
      30_000,
      'dispatch',
    );
    expect(await mailRow(quietFile.fileId)).toBeNull();
    expect(mailsTo('quiet@example.com')).toHaveLength(0);
    expect(mailsTo('mailer@example.com')).toHaveLength(0);
  });

  it('runs twice, mails once', async () => {
    const owner = await signIn('twice@example.com');
    await db.query(sql.type(AnyRow)`update users set conversion_result_email = true where id = ${owner.id}`);
    const { fileId, jobId } = await seedConvertedFile(app, owner.id);
    // Written as already dispatched: this test runs the job's function itself.
    const eventId = await db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
      insert into outbox_events (type, aggregate_id, payload, dispatched_at)
      values ('conversion.completed', ${fileId}, ${sql.jsonb({ fileId, jobId, userId: owner.id, pages: 2, wcagStatus: 'passed' })}, now()) returning id`);
    const deps = { ...app.deps, downloadSecret: 'test-download-secret' };
    const outcomes = await Promise.all([sendResultMail(deps, eventId), sendResultMail(deps, eventId)]);
    expect(outcomes.sort()).toEqual(['already_sent', 'sent']);
    expect(await sendResultMail(deps, eventId)).toBe('already_sent');
    expect(mailsTo('twice@example.com')).toHaveLength(1);
    expect(mailsTo('twice@example.com')[0]!.text).toContain('Findings in the report: 0');
  });
});
