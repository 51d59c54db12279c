import yazl from 'yazl';
import nodemailer from 'nodemailer';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Readable } from 'node:stream';
import { loadConfig } from '../../server/config.ts';
import { sql } from '../../server/db/database.ts';
import { readAll } from '../../server/storage/storage.ts';
import { startSmtpListener } from '../../server/intake/smtp-listener.ts';
import { TEST_PROXY_SECRET } from '../helpers/app.ts';

import { conversionLog, corpusPdf, header, INTAKE_ADDRESS, parseSent, PUBLIC_ADDRESS, rawHeaders, sendLog, startIntake, type Intake } from './harness.ts';
import { until } from '../helpers/wait.ts';

let intake: Intake;
let multicolumn: Buffer;

beforeAll(async () => {
  // 300 KB files, 600 KB messages: the corpus's 359 KB report is "too large" without sending megabytes.
  intake = await startIntake({ env: { INTAKE_MAX_BYTES: '300000', INTAKE_SENDER_LIMIT: '3' } });
  multicolumn = await corpusPdf('multicolumn-latex.pdf');
}, 60_000);

/** The one reply the fake received for a message (the sender's address as To), parsed. */
async function onlyReplyTo(address: string) {
  const sent = await intake.mail.waitForSent(1);
  const mine = [];
  for (const message of sent) {
    const email = await parseSent(message.raw);
    if (email.to?.[0]?.address === address) mine.push({ email, raw: message.raw });
  }
  expect(mine).toHaveLength(1);
  return mine[0]!;
}

async function repliesTo(address: string) {
  const found = [];
  for (const message of intake.mail.sent) {
    const email = await parseSent(message.raw);
    if (email.to?.[0]?.address === address) found.push(email);
  }
  return found;
}

describe('the SMTP listener', () => {
  it('listens on an unprivileged port by default, for the intake domain', () => {
    const { intake: defaults } = loadConfig({});
    expect(defaults.smtpPort).toBe(2525);
    expect(defaults.maxBytes).toBe(25 * 1024 * 1024);
    expect(defaults.domain).toBe('intake.folio.localhost');
  });

  it('refuses a recipient outside the intake domain at RCPT with 550, and takes ours', async () => {
    const error = await intake.send({ from: 'someone@example.com', to: 'victim@elsewhere.example', text: 'relay me' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    const id = await intake.send({ from: 'someone-else@example.com', to: `CONVERT@${INTAKE_ADDRESS.split('@')[1]!.toUpperCase()}`, text: 'hello' });
    expect((await intake.settled(id)).status).toBeDefined();
  });

  it('refuses a message over the size limit at the end of DATA with 552 and keeps nothing of it', async () => {
    const { app } = intake;
    // A listener whose limit is 40 KB, so a 78 KB PDF is over it without moving megabytes.
    const small = await startSmtpListener(
      { ...app.deps, config: { ...app.config, intake: { ...app.config.intake, maxMessageBytes: 40_000 } } },
      { port: 0, host: '127.0.0.1' },
    );
    try {
      const before = await app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from intake_messages`);
      // nodemailer declares no SIZE for a message it streams, so the limit bites at DATA, not at MAIL FROM.
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: small.port, ignoreTLS: true });
      const error = await transport
        .sendMail({ from: 'big@example.com', to: INTAKE_ADDRESS, text: 'big', attachments: [{ filename: 'big.pdf', content: multicolumn }] })
        .catch((caught: unknown) => caught);
      transport.close();
      expect(error).toMatchObject({ responseCode: 552, command: 'DATA' });
      const after = await app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from intake_messages`);
      expect(after).toBe(before);
    } finally {
      await small.close();
    }
  });
});

describe('branded refusals', () => {
  it('tells an unregistered sender how to register, once an hour, and logs the attempt', async () => {
    const first = await intake.send({
      from: 'stranger@example.com',
      subject: 'my pdf',
      text: 'hi',
      attachments: [{ filename: 'a.pdf', content: multicolumn }],
    });
    const row = await intake.settled(first);
    expect(row).toMatchObject({ status: 'refused', outcome: 'unregistered' });
    const { email, raw } = await onlyReplyTo('stranger@example.com');
    expect(email.subject).toBe('Re: my pdf');
    expect(email.text).toMatch(/Sign up/);
    expect(email.text).toContain('https://folio.test/signup');
    expect(email.replyTo?.[0]).toMatchObject({ address: PUBLIC_ADDRESS });
    expect(rawHeaders(raw)).toMatch(/^Auto-Submitted: auto-replied$/m);
    expect(await conversionLog(intake.app, first)).toMatchObject({ status: 'error', customerId: null, errorMessage: 'Unregistered sender', creditsCharged: 0 });

    const second = await intake.send({ from: 'stranger@example.com', subject: 'again', text: 'hi' });
    expect(await intake.settled(second)).toMatchObject({ status: 'dropped', outcome: 'unregistered_repeat' });
    expect(await repliesTo('stranger@example.com')).toHaveLength(1);
  });

  it('asks for a PDF when nothing is attached, threading the reply under the message', async () => {
    await intake.customer('Nofile@Example.com', { planType: 'paid', credits: 10 });
    const id = await intake.send({
      from: 'nofile@example.com',
      subject: 'convert please',
      text: 'forgot it',
      messageId: '<orig-1@client.example>',
      references: '<root@client.example> <parent@client.example>',
    });
    expect(await intake.settled(id)).toMatchObject({ status: 'refused', outcome: 'no_attachment' });
    const { email } = await onlyReplyTo('nofile@example.com');
    expect(email.text).toMatch(/no attachment/i);
    expect(email.inReplyTo).toBe('<orig-1@client.example>');
    expect(email.references).toBe('<root@client.example> <parent@client.example> <orig-1@client.example>');
    expect(email.from).toMatchObject({ address: 'convert@folio.test', name: 'Folio' });
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', errorMessage: 'No attachment' });
    expect(await sendLog(intake.app, id)).toEqual([{ source: 'intake:no_attachment', status: 'sent', provider: 'mail_api', errorKind: null }]);
  });

  it('refuses a file that is not a PDF by content, whatever its name, and a zip bomb stays inert', async () => {
    await intake.customer('types@example.com', { planType: 'paid', credits: 10 });
    // 16 MB of zeros deflate to ~16 KB (a real bomb nests such layers): never inflated, it is just not a PDF.
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.alloc(16 * 1024 * 1024), 'payload.bin');
    zip.end();
    const bomb = await readAll(zip.outputStream as Readable);
    expect(bomb.length).toBeLessThan(100_000);
    const id = await intake.send({
      from: 'types@example.com',
      subject: 'invoice',
      text: 'see attached',
      attachments: [{ filename: 'invoice.pdf', content: bomb, contentType: 'application/pdf' }],
    });
    expect(await intake.settled(id)).toMatchObject({ status: 'refused', outcome: 'unsupported_type' });
    const { email } = await onlyReplyTo('types@example.com');
    expect(email.text).toMatch(/invoice\.pdf is not a PDF we can convert: its content is not a PDF/);
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', errorMessage: 'Unsupported file type: application/pdf' });

    await intake.customer('docx@example.com', { planType: 'paid', credits: 10 });
    const docx = await intake.send({
      from: 'docx@example.com',
      subject: 'word file',
      text: 'x',
      attachments: [
        {
          filename: 'letter.docx',
          content: Buffer.from('PK\u0003\u0004 not really'),
          contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        },
      ],
    });
    expect(await intake.settled(docx)).toMatchObject({ status: 'refused', outcome: 'unsupported_type' });
    expect((await onlyReplyTo('docx@example.com')).email.text).toMatch(/Convert-by-email accepts PDF files only/);
  });

  it('takes a PDF sent as application/octet-stream under any name (content decides)', async () => {
    await intake.customer('octet@example.com', { planType: 'free' });
    const encrypted = await corpusPdf('encrypted-user-password.pdf');
    const id = await intake.send({
      from: 'octet@example.com',
      subject: 'locked',
      text: 'x',
      attachments: [{ filename: 'scan.bin', content: encrypted, contentType: 'application/octet-stream' }],
    });
    // It is a PDF, so it gets as far as opening: then the password stops it.
    expect(await intake.settled(id)).toMatchObject({ status: 'refused', outcome: 'unsupported_type' });
    const [ack, refusal] = await repliesTo('octet@example.com');
    expect(ack!.text).toMatch(/We received scan\.bin\.pdf/);
    expect(refusal!.text).toMatch(/scan\.bin\.pdf is not a PDF we can convert: it is protected with a password/);
    // The acknowledgment went first (the PDF passed the checks before opening), then the refusal.
    expect((await sendLog(intake.app, id)).map((row) => row.source)).toEqual(['intake:acknowledgment', 'intake:unsupported_type']);
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', errorMessage: expect.stringMatching(/^PDF_ENCRYPTED/) });
  });

  it('refuses a PDF over the size limit with the limit in the reply', async () => {
    await intake.customer('big@example.com', { planType: 'paid', credits: 100 });
    const big = await corpusPdf('korean-report-4pages.pdf');
    const id = await intake.send({ from: 'big@example.com', subject: 'report', text: 'x', attachments: [{ filename: 'report.pdf', content: big }] });
    expect(await intake.settled(id)).toMatchObject({ status: 'refused', outcome: 'too_large' });
    expect((await onlyReplyTo('big@example.com')).email.text).toMatch(/report\.pdf is larger than the 0\.3 MB limit/);
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', errorMessage: `File too large: ${big.length} bytes` });
  });

  it('refuses before any work when the balance cannot cover the estimate, with the balance and a purchase link', async () => {
    const customerId = await intake.customer('broke@example.com', { planType: 'free', freeUsed: 10 });
    const id = await intake.send({ from: 'broke@example.com', subject: 'paper', text: 'x', attachments: [{ filename: 'paper.pdf', content: multicolumn }] });
    expect(await intake.settled(id)).toMatchObject({ status: 'refused', outcome: 'insufficient_credits', ackSentAt: null });
    const { email } = await onlyReplyTo('broke@example.com');
    expect(email.text).toMatch(/You have 0 of your 10 free pages left/);
    expect(email.text).toContain('https://folio.test/account/credits');
    expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', customerId, creditsCharged: 0, errorMessage: 'Insufficient credits' });
  });
});

describe('a reply the mail API does not take', () => {
  it.each([
    ['401 on every attempt', { kind: 'error', status: 401 } as const, 'unavailable', /^mail_api 401/],
    ['500', { kind: 'error', status: 500 } as const, 'ambiguous', /^mail_api 500/],
    ['a timeout', { kind: 'delay', ms: 3_000 } as const, 'ambiguous', /no answer within 2000 ms/],
  ])('is logged on %s and changes nothing else: the refusal is recorded as it would be', async (_name, answer, kind, error) => {
    const address = `unlucky-${kind}-${answer.kind === 'error' ? answer.status : 'timeout'}@example.com`;
    const customerId = await intake.customer(address, { planType: 'paid', credits: 10 });
    intake.mail.always(answer);
    const sentBefore = intake.mail.sent.length;
    try {
      const id = await intake.send({ from: address, subject: 'no file', text: 'x' });
      const row = await intake.settled(id);
      expect(row).toMatchObject({ status: 'refused', outcome: 'no_attachment', replySentAt: null, replyError: expect.stringMatching(error) });
      expect(await conversionLog(intake.app, id)).toMatchObject({ status: 'error', customerId, errorMessage: 'No attachment', creditsCharged: 0 });
      expect(await sendLog(intake.app, id)).toEqual([{ source: 'intake:no_attachment', status: 'failed', provider: 'mail_api', errorKind: kind }]);
      // Why a timeout is ambiguous: the provider still takes the message after we stopped waiting.
      if (answer.kind === 'delay') await intake.mail.waitForSent(sentBefore + 1, 10_000);
    } finally {
      intake.mail.always(undefined);
    }
  });
});

describe('loop guards and abuse limits', () => {
  it.each([
    ['auto-submitted mail', { from: 'ooo@example.com', headers: { 'Auto-Submitted': 'auto-replied' } }, undefined, 'auto-submitted: auto-replied'],
    ['a bounce (null envelope sender)', { from: 'mailer@example.com', headers: {} }, '', 'bounce: empty envelope sender'],
    ['a mailer-daemon', { from: 'MAILER-DAEMON@example.com', headers: {} }, undefined, 'system sender: mailer-daemon'],
    ['our own address', { from: PUBLIC_ADDRESS, headers: {} }, undefined, 'our own address'],
    ['bulk mail', { from: 'list@example.com', headers: { Precedence: 'bulk' } }, undefined, 'precedence: bulk'],
  ])('never replies to %s', async (_name, message, envelopeFrom, reason) => {
    await intake.customer(message.from, { planType: 'paid', credits: 10 }).catch(() => undefined);
    const before = intake.mail.sent.length;
    const id = await intake.send(
      { from: message.from, subject: 'auto', text: 'x', headers: message.headers },
      envelopeFrom === undefined ? undefined : { from: envelopeFrom, to: [INTAKE_ADDRESS] },
    );
    expect(await intake.settled(id)).toMatchObject({ status: 'dropped', outcome: `loop_guard: ${reason}` });
    expect(intake.mail.sent.length).toBe(before);
  });

  it('drops a sender over the per-sender limit without a reply', async () => {
    await intake.customer('chatty@example.com', { planType: 'paid', credits: 10 });
    const ids = [];
    for (let n = 0; n < 4; n++) ids.push(await intake.send({ from: 'chatty@example.com', subject: `no file ${n}`, text: 'x' }));
    const rows = await Promise.all(ids.map((id) => intake.settled(id)));
    expect(rows.map((row) => row.outcome).sort()).toEqual(['no_attachment', 'no_attachment', 'no_attachment', 'rate_limited']);
    expect(await repliesTo('chatty@example.com')).toHaveLength(3);
  });

  it('drops a message nested past the part limit with a log entry, and keeps working', async () => {
    await intake.customer('nested@example.com', { planType: 'paid', credits: 10 });
    let body = 'Content-Type: text/plain\r\n\r\ndeep\r\n';
    for (let depth = 0; depth < 60; depth++) {
      body = `Content-Type: multipart/mixed; boundary="b${depth}"\r\n\r\n--b${depth}\r\n${body}--b${depth}--\r\n`;
    }
    const raw = `From: nested@example.com\r\nTo: ${INTAKE_ADDRESS}\r\nSubject: deep\r\nMessage-ID: <deep@example.com>\r\nMIME-Version: 1.0\r\n${body}`;
    const before = intake.mail.sent.length;
    const id = await intake.send({ envelope: { from: 'nested@example.com', to: [INTAKE_ADDRESS] }, raw });
    expect(await intake.settled(id)).toMatchObject({ status: 'dropped', outcome: 'unreadable' });
    expect(intake.mail.sent.length).toBe(before);
    // The worker is alive: the next message is answered.
    const next = await intake.send({ from: 'nested@example.com', subject: 'plain', text: 'x' });
    expect(await intake.settled(next)).toMatchObject({ status: 'refused', outcome: 'no_attachment' });
  });

  it('keeps a subject that smuggles line breaks on one line: no header and no recipient is added', async () => {
    await intake.customer('inject@example.com', { planType: 'paid', credits: 10 });
    // An encoded word that decodes to CR LF + a Bcc header.
    const subject = '=?UTF-8?Q?Hello=0D=0ABcc:_victim@evil.example=0D=0AX-Injected:_1?=';
    const raw = `From: inject@example.com\r\nTo: ${INTAKE_ADDRESS}\r\nSubject: ${subject}\r\nMessage-ID: <inject@example.com>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nno file\r\n`;
    const id = await intake.send({ envelope: { from: 'inject@example.com', to: [INTAKE_ADDRESS] }, raw });
    expect(await intake.settled(id)).toMatchObject({ status: 'refused' });
    const { email, raw: replyRaw } = await onlyReplyTo('inject@example.com');
    const headers = rawHeaders(replyRaw);
    expect(headers).not.toMatch(/^Bcc:/im);
    expect(headers).not.toMatch(/^X-Injected:/im);
    expect(header(email, 'bcc')).toBeUndefined();
    expect(email.subject).toBe('Re: Hello Bcc: victim@evil.example X-Injected: 1');
  });
});

describe('POST /internal/inbound-email', () => {
  const raw = (messageId: string) =>
    `From: routed@example.com\r\nTo: ${INTAKE_ADDRESS}\r\nSubject: routed\r\nMessage-ID: ${messageId}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nno file\r\n`;
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${intake.app.baseUrl}/internal/inbound-email`, { method: 'POST', headers: { 'content-type': 'message/rfc822', ...headers }, body });

  it('needs the proxy secret and message/rfc822', async () => {
    expect((await post(raw('<a@x>'), {})).status).toBe(403);
    expect((await post(raw('<a@x>'), { 'x-proxy-secret': 'wrong' })).status).toBe(403);
    const wrongType = await post(raw('<a@x>'), { 'x-proxy-secret': TEST_PROXY_SECRET, 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
  });

  it('stores and queues the raw message like the listener, and takes a redelivery once', async () => {
    await intake.customer('routed@example.com', { planType: 'paid', credits: 10 });
    const headers = { 'x-proxy-secret': TEST_PROXY_SECRET, 'x-envelope-from': 'routed@example.com', 'x-envelope-to': INTAKE_ADDRESS };
    const first = await post(raw('<routed-1@example.com>'), headers);
    expect(first.status).toBe(202);
    const body = (await first.json()) as { id: string; duplicate: boolean };
    expect(body.duplicate).toBe(false);
    expect(await intake.settled(body.id)).toMatchObject({ status: 'refused', outcome: 'no_attachment' });

    const again = (await (await post(raw('<routed-1@example.com>'), headers)).json()) as { duplicate: boolean };
    expect(again.duplicate).toBe(true);
    await until(
      () => repliesTo('routed@example.com'),
      (list) => list.length >= 1,
      5_000,
    );
    expect(await repliesTo('routed@example.com')).toHaveLength(1);
  });
});

describe('the intake worker endpoints', () => {
  it('POST /test-send sends through the mail API with the proxy secret and logs it', async () => {
    const url = `${intake.app.baseUrl}/test-send`;
    const payload = JSON.stringify({ to: 'ops@example.com', subject: 'ping', body: 'hello <b>ops</b>' });
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload })).status).toBe(403);
    const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-proxy-secret': TEST_PROXY_SECRET }, body: payload });
    expect(answer.status).toBe(200);
    const result = (await answer.json()) as { ok: boolean; messageId: string };
    expect(result.ok).toBe(true);
    const sent = intake.mail.sent.find((message) => message.id === result.messageId)!;
    const email = await parseSent(sent.raw);
    expect(email).toMatchObject({ subject: 'ping', text: 'hello <b>ops</b>' });
    const logged = await intake.app.deps.db.one(sql.type(z.object({ provider: z.string(), status: z.string(), source: z.string() }))`
      select provider, status, source from email_log where provider_message_id = ${result.messageId}`);
    expect(logged).toEqual({ provider: 'mail_api', status: 'sent', source: 'intake:test-send' });

    const bad = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-proxy-secret': TEST_PROXY_SECRET }, body: '{"to":"x"}' });
    expect(bad.status).toBe(400);
  });

  it('GET /health reports the mail API', async () => {
    const health = (await (await fetch(`${intake.app.baseUrl}/health`)).json()) as { intake: Record<string, unknown> };
    expect(health.intake).toMatchObject({ mailApi: 'configured' });
  });
});
