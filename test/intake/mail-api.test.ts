import { generateKeyPairSync } from 'node:crypto';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { composeMime, replyReferences } from '../../server/intake/compose-mime.ts';
import { createMailApiClient } from '../../server/intake/mail-api.ts';
import { createIntakeMailer } from '../../server/intake/send-intake-mail.ts';
import { startMailApiFake, type MailApiFake } from '../fakes/mail-api.ts';
import { createTestClock } from '../helpers/app.ts';

const SUBJECT = 'convert@folio.test';
let fake: MailApiFake;
const clock = createTestClock(new Date('2026-11-20T10:00:00Z'));

beforeAll(async () => {
  fake = await startMailApiFake({ subject: SUBJECT, now: () => clock.now().getTime() });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function settings(overrides: Record<string, string> = {}) {
  return loadConfig({
    MAIL_SERVICE_ACCOUNT_KEY: fake.serviceAccountKey,
    MAIL_API_BASE_URL: fake.url,
    MAIL_API_TIMEOUT_MS: '2000',
    ...overrides,
  }).intake.mail;
}

function client(overrides: Record<string, string> = {}) {
  return createMailApiClient({ settings: settings(overrides), subject: SUBJECT, now: clock.now });
}

const MIME = composeMime({
  from: 'Folio <convert@folio.test>',
  to: 'reader@example.com',
  subject: 'Re: hello',
  messageId: '<m1@folio.test>',
  date: new Date('2026-11-20T10:00:00Z'),
  text: 'hi',
  html: '<p>hi</p>',
});

describe('the mail-provider API client', () => {
  it('signs an RS256 assertion the token endpoint accepts, and sends base64url MIME with the token', async () => {
    const outcome = await client().send(MIME);
    expect(outcome).toMatchObject({ ok: true });
    expect(fake.refusedGrants).toEqual([]);
    expect(fake.exchanges).toBe(1);
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]!.raw.toString('utf8')).toBe(MIME);
  });

  it('caches the token: two sends in a row exchange one, and an hour later it exchanges again', async () => {
    const mailer = client();
    expect((await mailer.send(MIME)).ok).toBe(true);
    expect((await mailer.send(MIME)).ok).toBe(true);
    expect(fake.exchanges).toBe(1);
    expect(fake.sent[0]!.token).toBe(fake.sent[1]!.token);
    clock.advance(60 * 60 * 1000);
    expect((await mailer.send(MIME)).ok).toBe(true);
    expect(fake.exchanges).toBe(2);
  });

  it('concurrent first sends share one exchange', async () => {
    const mailer = client();
    const outcomes = await Promise.all([mailer.send(MIME), mailer.send(MIME), mailer.send(MIME)]);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(fake.exchanges).toBe(1);
  });

  it('on a 401 from the send endpoint drops the token and tries once more with a fresh one', async () => {
    const mailer = client();
    await mailer.send(MIME);
    fake.revokeTokens();
    expect(await mailer.send(MIME)).toMatchObject({ ok: true });
    expect(fake.exchanges).toBe(2);
    // Refused with a fresh token too: our credentials are not accepted (unavailable, nothing sent).
    fake.always({ kind: 'error', status: 401 });
    expect(await mailer.send(MIME)).toMatchObject({ ok: false, kind: 'unavailable', error: expect.stringMatching(/^mail_api 401/) });
    expect(fake.exchanges).toBe(3);
  });

  it.each([
    [{ kind: 'error', status: 500 } as const, 'ambiguous', /^mail_api 500/],
    [{ kind: 'error', status: 503 } as const, 'unavailable', /^mail_api 503/],
    [{ kind: 'error', status: 429 } as const, 'unavailable', /^mail_api 429/],
    [{ kind: 'error', status: 400 } as const, 'rejected', /^mail_api 400/],
    [{ kind: 'delay', ms: 3_000 } as const, 'ambiguous', /no answer within 2000 ms/],
    [{ kind: 'drop' } as const, 'ambiguous', /network error/],
  ])('classifies %o as %s and never throws', async (answer, kind, error) => {
    fake.next(answer);
    expect(await client().send(MIME)).toMatchObject({ ok: false, kind, error: expect.stringMatching(error) });
    // Why a timeout is ambiguous: the provider may still take the message after we stopped waiting.
    if (answer.kind === 'delay') await fake.waitForSent(1, 5_000);
  });

  it('reports a token endpoint that refuses the grant, or a bad key, as unavailable', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const wrongKey = JSON.stringify({ ...JSON.parse(fake.serviceAccountKey), private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });
    expect(await client({ MAIL_SERVICE_ACCOUNT_KEY: wrongKey }).send(MIME)).toMatchObject({
      ok: false,
      kind: 'unavailable',
      error: expect.stringMatching(/token endpoint 400/),
    });
    expect(fake.refusedGrants).toEqual(['Invalid JWT Signature.']);
    expect(await client({ MAIL_SERVICE_ACCOUNT_KEY: '{"client_email":"x"}' }).send(MIME)).toMatchObject({ ok: false, kind: 'unavailable' });
    expect(client({ MAIL_SERVICE_ACCOUNT_KEY: '' }).configured).toBe(false);
    // MAIL_TOKEN_URL overrides the key's token_uri (and is the audience the assertion names).
    expect(await client({ MAIL_TOKEN_URL: `${fake.url}/elsewhere` }).send(MIME)).toMatchObject({ ok: false, kind: 'unavailable' });
    expect(fake.sent).toHaveLength(0);
  });
});

describe('createIntakeMailer', () => {
  it('sends from the public address on the current sender domain, and keeps Reply-To on the public address', () => {
    const config = loadConfig({
      INTAKE_PUBLIC_ADDRESS: 'convert@old-folio.example',
      EMAIL_RETIRED_DOMAIN: 'old-folio.example',
      EMAIL_SENDER_DOMAIN: 'folio.example',
    });
    const mailer = createIntakeMailer({ config, clock });
    expect(mailer.from).toBe('Folio <convert@folio.example>');
    expect(mailer.replyTo).toBe('convert@old-folio.example');
  });
});

describe('composeMime', () => {
  it('threads, encodes and keeps every header on its own line', async () => {
    const raw = composeMime({
      from: 'Folio <convert@folio.test>',
      to: 'Zoë <zoe@example.com>',
      replyTo: 'convert@folio.test',
      subject: 'Re: Grüße\r\nBcc: evil@example.com',
      messageId: '<r1@folio.test>',
      inReplyTo: '<a@x> trailing',
      references: replyReferences('<root@x> junk <a@x>', '<a@x>'),
      date: new Date('2026-11-20T10:00:00Z'),
      text: 'plain',
      html: '<p>html</p>',
      attachments: [{ filename: 'Bericht über.html', contentType: 'text/html; charset=utf-8', content: Buffer.from('<html></html>') }],
    });
    const headers = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(headers).not.toMatch(/^Bcc:/im);
    const email = await PostalMime.parse(raw);
    expect(email.subject).toBe('Re: Grüße Bcc: evil@example.com');
    expect(email.inReplyTo).toBe('<a@x>');
    expect(email.references).toBe('<root@x> <a@x>');
    expect(email.to?.[0]).toMatchObject({ name: 'Zoë', address: 'zoe@example.com' });
    expect(email.attachments[0]).toMatchObject({ filename: 'Bericht über.html', mimeType: 'text/html' });
    expect(email.text).toBe('plain');
    expect(email.html).toBe('<p>html</p>');
  });

  it('keeps the thread root and the newest references when the chain is long', () => {
    const chain = Array.from({ length: 40 }, (_, index) => `<m${index}@x>`).join(' ');
    const kept = replyReferences(chain, '<last@x>');
    expect(kept).toHaveLength(20);
    expect(kept[0]).toBe('<m0@x>');
    expect(kept.at(-1)).toBe('<last@x>');
  });
});
