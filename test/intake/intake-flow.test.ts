import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobObjectKey } from '../../server/conversion-jobs/conversion-deps.ts';
import type { EngineProvider } from '../../server/conversion-jobs/engine-provider.ts';
import { sql } from '../../server/db/database.ts';
import { cleanUpMessage } from '../../server/intake/clean-up-message.ts';
import { finishMailedConversion } from '../../server/intake/finish-mailed-conversion.ts';
import { giveUpOnMessage } from '../../server/intake/give-up-on-message.ts';
import { handleInboundMessage } from '../../server/intake/handle-inbound-message.ts';
import { loadIntakeMessage } from '../../server/intake/intake.queries.ts';
import { sweepEndedConversions } from '../../server/intake/watch-conversions.ts';
import { api, gatedEngine } from '../service/harness.ts';
import { conversionLog, corpusPdf, customerBalance, header, parseSent, PUBLIC_ADDRESS, sendLog, startIntake, type Intake } from './harness.ts';
import { until } from '../helpers/wait.ts';

let intake: Intake;
let gated: ReturnType<typeof gatedEngine>;
let failing = false;
let inspectCrashes = false;
let multicolumn: Buffer;

beforeAll(async () => {
  intake = await startIntake({
    engine: (core) => {
      gated = gatedEngine(core.config, core.log);
      const provider: EngineProvider = async () => {
        const engine = await gated.provider();
        if (inspectCrashes) {
          return {
            ...engine,
            inspect: async () => {
              throw new Error('worker crashed while opening the PDF');
            },
          };
        }
        if (!failing) return engine;
        return {
          ...engine,
          convertPages: async () => {
            throw new Error('engine exploded');
          },
        };
      };
      return provider;
    },
  });
  multicolumn = await corpusPdf('multicolumn-latex.pdf');
}, 60_000);

async function repliesTo(address: string) {
  const found = [];
  for (const message of intake.mail.sent) {
    const email = await parseSent(message.raw);
    if (email.to?.[0]?.address === address) found.push({ email, raw: message.raw });
  }
  return found;
}

const FileRow = z.object({ storageKey: z.string().nullable(), status: z.string(), ownerEmail: z.string() });
function fileRow(fileId: string) {
  return intake.app.deps.db.maybeOne(sql.type(FileRow)`
    select f.storage_key as "storageKey", f.status, u.email as "ownerEmail" from files f join users u on u.id = f.owner_id where f.id = ${fileId}`);
}

function jobOf(fileId: string) {
  return intake.app.deps.db.one(sql.type(z.object({ id: z.uuid(), status: z.string(), resultKey: z.string().nullable() }))`
    select id, status, result_key as "resultKey" from large_conversion_jobs where file_id = ${fileId} order by created_at desc limit 1`);
}

// Conversions on a 2-core machine shared with other test files: generous bounds, never sleeps.
describe('a registered customer mails a PDF', { timeout: 120_000 }, () => {
  it('gets an acknowledgment, then the accessible HTML in the same thread; 1 credit per page is charged once and the job is logged', async () => {
    const customerId = await intake.customer('reader@example.com', { planType: 'paid', credits: 100 });
    const id = await intake.send({
      from: 'Ada Reader <Reader@Example.COM>',
      subject: 'Accessible version please',
      text: 'Here it is.',
      messageId: '<paper-1@client.example>',
      attachments: [{ filename: 'multicolumn-latex.pdf', content: multicolumn, contentType: 'application/pdf' }],
    });
    const row = await intake.settled(id, ['replied', 'refused', 'failed', 'dropped'], 120_000);
    expect(row).toMatchObject({ status: 'replied', outcome: 'result', replyError: null, senderEmail: 'reader@example.com' });

    const replies = await repliesTo('reader@example.com');
    expect(replies.map(({ email }) => email.subject)).toEqual(['Re: Accessible version please', 'Re: Accessible version please']);
    const [ack, result] = replies.map(({ email }) => email);
    expect(ack!.text).toMatch(/We received multicolumn-latex\.pdf \(about 1 page\)/);
    for (const email of [ack!, result!]) {
      expect(email.inReplyTo).toBe('<paper-1@client.example>');
      expect(email.references).toBe('<paper-1@client.example>');
      expect(email.replyTo?.[0]?.address).toBe(PUBLIC_ADDRESS);
      expect(email.from).toMatchObject({ address: 'convert@folio.test' });
      expect(header(email, 'auto-submitted')).toBe('auto-replied');
    }
    expect(result!.text).toMatch(/3 pages converted \(\d standard, \d complex\); 3 credits used/);
    expect(result!.text).toMatch(/Your balance is 97 credits/);
    expect(result!.attachments).toHaveLength(1);
    const attachment = result!.attachments[0]!;
    expect(attachment).toMatchObject({ filename: 'multicolumn-latex.html', mimeType: 'text/html', disposition: 'attachment' });
    const html = Buffer.from(attachment.content as ArrayBuffer).toString('utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toMatch(/<main/);

    expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 97, held: 0, freeUsed: 0, freeHeld: 0 });
    const log = await conversionLog(intake.app, id);
    expect(log).toMatchObject({
      status: 'success',
      customerId,
      senderEmail: 'reader@example.com',
      filename: 'multicolumn-latex.pdf',
      fileType: 'pdf',
      totalPages: 3,
      creditsCharged: 3,
      errorMessage: null,
    });
    expect(log.standardPages! + log.complexPages!).toBe(3);
    expect(await sendLog(intake.app, id)).toEqual([
      { source: 'intake:acknowledgment', status: 'sent', provider: 'mail_api', errorKind: null },
      { source: 'intake:result', status: 'sent', provider: 'mail_api', errorKind: null },
    ]);

    // The same conversion as an upload: the customer's file, its job, the outbox event webhooks consume.
    const fileId = row.fileId!;
    const job = await jobOf(fileId);
    expect(job.status).toBe('completed');
    const outbox = await intake.app.deps.db.any(sql.type(z.object({ type: z.string() }))`select type from outbox_events where aggregate_id = ${fileId}`);
    expect(outbox.map((event) => event.type)).toEqual(['conversion.completed']);

    // Cleaned up asynchronously: the raw message, the mailed PDF and the chunk results go; the result zip stays.
    const store = intake.app.deps.store;
    const cleaned = await until(
      () => loadIntakeMessage(intake.app.deps.db, id),
      (current) => current?.rawKey === null,
      20_000,
      'cleanup',
    );
    expect(cleaned?.rawKey).toBeNull();
    expect(await store.exists(`intake/${id}/message.eml`)).toBe(false);
    expect(await store.exists(`files/${fileId}/source`)).toBe(false);
    expect(await store.exists(jobObjectKey(fileId, job.id, 'chunks/00000.json'))).toBe(false);
    expect(await store.exists(job.resultKey!)).toBe(true);
    expect(await fileRow(fileId)).toEqual({ storageKey: null, status: 'completed', ownerEmail: 'reader@example.com' });
  }, 150_000);

  it('runs each step twice with the same result: no second reply, row or charge', async () => {
    const customerId = await intake.customer('twice@example.com', { planType: 'free' });
    const pdf = await corpusPdf('verapdf-ua1-7.4.2-headings.pdf');
    const id = await intake.send({ from: 'twice@example.com', subject: 'one page', text: 'x', attachments: [{ filename: 'headings.pdf', content: pdf }] });
    const row = await intake.settled(id, ['replied', 'failed'], 120_000);
    expect(row.status).toBe('replied');
    // The free tier is charged through use_free_pages.
    expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 0, held: 0, freeUsed: 1, freeHeld: 0 });
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'success', totalPages: 1, creditsCharged: 1 });

    const sentBefore = intake.mail.sent.length;
    await handleInboundMessage(intake.workerDeps, id);
    await finishMailedConversion(intake.workerDeps, id);
    await cleanUpMessage(intake.workerDeps, id);
    await cleanUpMessage(intake.workerDeps, id);
    expect(intake.mail.sent.length).toBe(sentBefore);
    expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 0, held: 0, freeUsed: 1, freeHeld: 0 });
    const rows = await intake.app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from conversion_jobs where sender_email = 'twice@example.com'`);
    expect(rows).toBe(1);
  });

  it('keeps the conversion outcome when the result reply fails at the mail API (500): logged, charged once, recorded', async () => {
    const customerId = await intake.customer('unlucky@example.com', { planType: 'paid', credits: 10 });
    intake.mail.next({ kind: 'accept' }, { kind: 'error', status: 500 });
    const id = await intake.send({ from: 'unlucky@example.com', subject: 'paper', text: 'x', attachments: [{ filename: 'paper.pdf', content: multicolumn }] });
    const row = await intake.settled(id, ['replied', 'failed'], 120_000);
    expect(row).toMatchObject({ status: 'replied', replySentAt: null, replyError: expect.stringMatching(/^mail_api 500/) });
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'success', totalPages: 3, creditsCharged: 3 });
    expect(await customerBalance(intake.app, customerId)).toMatchObject({ credits: 7, held: 0 });
    expect(await sendLog(intake.app, id)).toEqual([
      { source: 'intake:acknowledgment', status: 'sent', provider: 'mail_api', errorKind: null },
      { source: 'intake:result', status: 'failed', provider: 'mail_api', errorKind: 'ambiguous' },
    ]);
  });

  it('gets the error reply when the pipeline fails: nothing charged, the error in conversion_jobs', async () => {
    const customerId = await intake.customer('failing@example.com', { planType: 'paid', credits: 10 });
    failing = true;
    try {
      const id = await intake.send({
        from: 'failing@example.com',
        subject: 'broken',
        text: 'x',
        attachments: [{ filename: 'paper.pdf', content: multicolumn }],
      });
      const row = await intake.settled(id, ['replied', 'failed'], 120_000);
      expect(row).toMatchObject({ status: 'failed', outcome: 'conversion_failed' });
      const [, reply] = await repliesTo('failing@example.com');
      expect(reply!.email.text).toMatch(/The conversion of paper\.pdf failed/);
      expect(reply!.email.text).toMatch(/No credits were charged/);
      expect(reply!.email.inReplyTo).toBe(row.threadMessageId);
      expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
      expect(await conversionLog(intake.app, id)).toMatchObject({
        status: 'error',
        creditsCharged: 0,
        errorMessage: expect.stringMatching(/^CONVERSION_FAILED/),
      });
      expect((await jobOf(row.fileId!)).status).toBe('failed');
    } finally {
      failing = false;
    }
  });

  it('can be cancelled like an upload, by its owner in the API: the cancel reply, nothing charged', async () => {
    const customerId = await intake.customer('canceller@example.com', { planType: 'paid', credits: 10 });
    gated.holdConvert();
    try {
      const id = await intake.send({
        from: 'canceller@example.com',
        subject: 'stop',
        text: 'x',
        attachments: [{ filename: 'paper.pdf', content: multicolumn }],
      });
      const converting = await intake.settled(id, ['converting'], 30_000);
      // The conversion is queued right after the message is marked converting; cancel needs its job.
      await until(
        () =>
          intake.app.deps.db.maybeOneFirst(sql.type(z.object({ status: z.string() }))`
          select status from large_conversion_jobs where file_id = ${converting.fileId}`),
        (status) => status === 'pending' || status === 'processing',
        20_000,
        'the conversion job',
      );
      const token = await intake.app.token('canceller@example.com');
      const cancelled = await api(intake.app, token, 'POST', `/api/v1/files/${converting.fileId}/cancel`);
      expect(cancelled.status).toBe(200);
      const row = await intake.settled(id, ['replied', 'failed'], 30_000);
      expect(row).toMatchObject({ status: 'failed', outcome: 'conversion_cancelled' });
      const [, reply] = await repliesTo('canceller@example.com');
      expect(reply!.email.text).toMatch(/was cancelled before it finished\. No credits were charged/);
      expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
      expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', creditsCharged: 0 });
    } finally {
      gated.releaseConvert();
    }
  });

  it('is refused with its exact page count when the balance covers the estimate but not the pages', async () => {
    const customerId = await intake.customer('short@example.com', { planType: 'paid', credits: 2 });
    const id = await intake.send({
      from: 'short@example.com',
      subject: 'three pages',
      text: 'x',
      attachments: [{ filename: 'paper.pdf', content: multicolumn }],
    });
    const row = await intake.settled(id, ['refused', 'replied', 'failed'], 60_000);
    expect(row).toMatchObject({ status: 'refused', outcome: 'insufficient_credits' });
    const [ack, refusal] = await repliesTo('short@example.com');
    expect(ack!.email.text).toMatch(/We received paper\.pdf/);
    expect(refusal!.email.text).toMatch(/needs about 3 credits \(one per page\)\. Your balance is 2 credits\./);
    expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 2, held: 0, freeUsed: 0, freeHeld: 0 });
    // Never converted: the stored file goes entirely.
    await until(
      () => fileRow(row.fileId!),
      (file) => file === null,
      20_000,
      'the unconverted file deleted',
    );
  });
});

describe('a crash loses no mail', { timeout: 120_000 }, () => {
  it('a conversion that ends while no process listens is finished by the sweep', async () => {
    await intake.customer('unheard@example.com', { planType: 'paid', credits: 10 });
    const { boss, db } = intake.app.deps;
    await boss.offWork('intake.message');
    try {
      const id = await intake.send({
        from: 'unheard@example.com',
        subject: 'quiet',
        text: 'x',
        attachments: [{ filename: 'paper.pdf', content: multicolumn }],
      });
      // The handler runs in a process that dies before hearing the end: its watch never fires.
      await handleInboundMessage({ ...intake.workerDeps, watchConversion: async () => {} }, id);
      const converting = await loadIntakeMessage(db, id);
      expect(converting?.status).toBe('converting');
      await until(
        () => jobOf(converting!.fileId!),
        (job) => job.status === 'completed',
        60_000,
        'the conversion',
      );
      expect((await loadIntakeMessage(db, id))?.status).toBe('converting');
      expect(await sweepEndedConversions(intake.app.deps)).toBe(1);
      expect(await intake.settled(id, ['replied', 'failed'], 30_000)).toMatchObject({ status: 'replied', outcome: 'result' });
      expect(await sweepEndedConversions(intake.app.deps)).toBe(0);
    } finally {
      await boss.work('intake.message', { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
        if (job) await handleInboundMessage(intake.workerDeps, (job.data as { messageId: string }).messageId);
      });
    }
  });

  it('a handler that keeps failing after the acknowledgment ends in one failure reply, an error row and no charge', async () => {
    const customerId = await intake.customer('crashy@example.com', { planType: 'paid', credits: 10 });
    const { db } = intake.app.deps;
    inspectCrashes = true;
    try {
      const id = await intake.send({ from: 'crashy@example.com', subject: 'crash', text: 'x', attachments: [{ filename: 'paper.pdf', content: multicolumn }] });
      // The first receive acknowledges, then fails opening the PDF: pg-boss holds the job for a retry.
      await until(
        () =>
          db.maybeOneFirst(sql.type(z.object({ state: z.string() }))`
            select state from pgboss.job where name = 'intake.message' and data->>'messageId' = ${id}`),
        (state) => state === 'retry',
        20_000,
        'the failed receive',
      );
      expect((await loadIntakeMessage(db, id))?.ackSentAt).not.toBeNull();
      // What the dead-letter consumer does once the last retry has failed too.
      await giveUpOnMessage(intake.workerDeps, { messageId: id });
      expect(await loadIntakeMessage(db, id)).toMatchObject({ status: 'failed', outcome: 'dead_letter', replyError: null });
      const replies = await repliesTo('crashy@example.com');
      expect(replies.map(({ email }) => email.text?.split('\n')[0])).toEqual(['We are converting your PDF', 'We could not convert your PDF']);
      expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', creditsCharged: 0, errorMessage: 'The intake gave up after every retry' });
      expect(await customerBalance(intake.app, customerId)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
      // A receive after that finds the message finished and sends nothing.
      const sent = intake.mail.sent.length;
      await handleInboundMessage(intake.workerDeps, id);
      expect(intake.mail.sent.length).toBe(sent);
    } finally {
      inspectCrashes = false;
    }
  });

  it('a message accepted while no intake worker runs waits in the queue and is handled once one starts', async () => {
    await intake.customer('patient@example.com', { planType: 'paid', credits: 10 });
    const { boss } = intake.app.deps;
    await boss.offWork('intake.message');
    const id = await intake.send({ from: 'patient@example.com', subject: 'later', text: 'x' });
    const queued = await loadIntakeMessage(intake.app.deps.db, id);
    expect(queued?.status).toBe('received');
    const waiting = await intake.app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from pgboss.job where name = 'intake.message' and state = 'created' and data->>'messageId' = ${id}`);
    expect(waiting).toBe(1);
    await boss.work('intake.message', { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
      if (job) await handleInboundMessage(intake.workerDeps, (job.data as { messageId: string }).messageId);
    });
    expect(await intake.settled(id)).toMatchObject({ status: 'refused', outcome: 'no_attachment' });
  });
});
