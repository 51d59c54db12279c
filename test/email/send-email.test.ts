import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import type { ResendAnswer } from '../fakes/resend.ts';
import type { SesAnswer, SesSendEmailBody } from '../fakes/ses.ts';
import { PAST_TIMEOUT_MS, startEmailHarness, suppress } from './harness.ts';

const harness = await startEmailHarness();
beforeEach(() => harness.reset());

const message = { category: 'transactional' as const, to: 'Reader <reader@example.com>', subject: 'Your file is ready', text: 'Hello', html: '<p>Hello</p>' };

describe('sendEmail: provider A (Resend) failure kinds', () => {
  // Every row of the specification's table, as the real SDK sees the fake's answers.
  const rows: Array<[string, ResendAnswer, 'rejected' | 'unavailable' | 'ambiguous']> = [
    ['503 service_unavailable', { kind: 'error', status: 503 }, 'unavailable'],
    ['429 rate_limit_exceeded', { kind: 'error', status: 429, headers: { 'retry-after': '1' } }, 'unavailable'],
    ['429 daily_quota_exceeded', { kind: 'error', status: 429, name: 'daily_quota_exceeded' }, 'unavailable'],
    ['429 monthly_quota_exceeded', { kind: 'error', status: 429, name: 'monthly_quota_exceeded' }, 'unavailable'],
    ['401 missing_api_key', { kind: 'error', status: 401 }, 'unavailable'],
    ['403 invalid_api_key', { kind: 'error', status: 403 }, 'unavailable'],
    ['403 restricted_api_key', { kind: 'error', status: 403, name: 'restricted_api_key', message: 'API key is not active' }, 'unavailable'],
    ['403 suspended_api_key', { kind: 'error', status: 403, name: 'suspended_api_key' }, 'unavailable'],
    ['500 application_error', { kind: 'error', status: 500 }, 'ambiguous'],
    ['502', { kind: 'error', status: 502 }, 'ambiguous'],
    ['504', { kind: 'error', status: 504 }, 'ambiguous'],
    ['502 with an HTML body', { kind: 'non-json', status: 502 }, 'ambiguous'],
    ['503 with an HTML body', { kind: 'non-json', status: 503 }, 'ambiguous'],
    ['an answer slower than the attempt timeout', { kind: 'delay', ms: PAST_TIMEOUT_MS }, 'ambiguous'],
    ['a dropped connection', { kind: 'drop' }, 'ambiguous'],
    ['409 concurrent_idempotent_requests', { kind: 'error', status: 409 }, 'ambiguous'],
    ['400 validation_error', { kind: 'error', status: 400 }, 'rejected'],
    [
      '403 validation_error (domain not verified)',
      { kind: 'error', status: 403, name: 'validation_error', message: 'The example.com domain is not verified.' },
      'rejected',
    ],
    ['422 validation_error', { kind: 'error', status: 422 }, 'rejected'],
    ['409 invalid_idempotent_request', { kind: 'error', status: 409, name: 'invalid_idempotent_request' }, 'rejected'],
  ];
  it.each(rows.map(([label, answer, kind]) => [label, kind, answer] as const))('%s is %s, tried once and logged', async (_label, kind, answer) => {
    const { email } = harness.library();
    harness.resend.next(answer);
    const result = await email.send({ ...message, provider: 'provider_a' });
    expect(result).toMatchObject({ status: 'failed', ok: false, errorKind: kind, provider: 'provider_a' });
    expect(result.ok === false && result.error).toMatch(/^provider_a /);
    expect(harness.resend.requests).toHaveLength(1);
    const [row] = await harness.rows();
    expect(row).toMatchObject({ id: result.id, status: 'failed', error_kind: kind, provider: 'provider_a', provider_message_id: null });
  });

  it('is unavailable, without a crash, when PROVIDER_A_API_KEY is missing', async () => {
    const { email } = harness.library({ PROVIDER_A_API_KEY: undefined });
    const result = await email.send(message);
    expect(result).toMatchObject({ status: 'failed', errorKind: 'unavailable', error: 'provider_a: PROVIDER_A_API_KEY is not set' });
  });

  it('is ambiguous when the connection is refused', async () => {
    const { email } = harness.library({ PROVIDER_A_BASE_URL: 'http://127.0.0.1:9' });
    expect(await email.send(message)).toMatchObject({ status: 'failed', errorKind: 'ambiguous' });
  });
});

describe('sendEmail: provider B (SES v2) failure kinds', () => {
  const rows: Array<[string, SesAnswer, 'rejected' | 'unavailable' | 'ambiguous']> = [
    ['TooManyRequestsException (429)', { kind: 'error', type: 'TooManyRequestsException', message: 'Maximum sending rate exceeded.' }, 'unavailable'],
    ['LimitExceededException (daily quota)', { kind: 'error', type: 'LimitExceededException', message: 'Daily message quota exceeded.' }, 'unavailable'],
    ['SendingPausedException', { kind: 'error', type: 'SendingPausedException' }, 'unavailable'],
    ['AccountSuspendedException', { kind: 'error', type: 'AccountSuspendedException' }, 'unavailable'],
    ['MailFromDomainNotVerifiedException', { kind: 'error', type: 'MailFromDomainNotVerifiedException' }, 'unavailable'],
    ['403 UnrecognizedClientException (credentials refused)', { kind: 'error', type: 'UnrecognizedClientException' }, 'unavailable'],
    ['403 InvalidSignatureException', { kind: 'error', type: 'InvalidSignatureException' }, 'unavailable'],
    [
      '403 ExpiredTokenException',
      { kind: 'error', type: 'ExpiredTokenException', message: 'The security token included in the request is expired' },
      'unavailable',
    ],
    ['503', { kind: 'status', status: 503 }, 'unavailable'],
    ['500', { kind: 'status', status: 500 }, 'ambiguous'],
    ['502 with an HTML body', { kind: 'status', status: 502, nonJson: true }, 'ambiguous'],
    ['504', { kind: 'status', status: 504 }, 'ambiguous'],
    ['an answer slower than the attempt timeout', { kind: 'delay', ms: PAST_TIMEOUT_MS }, 'ambiguous'],
    ['a dropped connection', { kind: 'drop' }, 'ambiguous'],
    [
      'MessageRejected for an unverified sender identity',
      {
        kind: 'error',
        type: 'MessageRejected',
        message: 'Email address is not verified. The following identities failed the check in region US-EAST-1: noreply@folio.example',
      },
      'unavailable',
    ],
    ['MessageRejected for the content', { kind: 'error', type: 'MessageRejected', message: 'Illegal address' }, 'rejected'],
    ['BadRequestException', { kind: 'error', type: 'BadRequestException' }, 'rejected'],
    [
      'NotFoundException (unknown configuration set)',
      { kind: 'error', type: 'NotFoundException', message: 'Configuration set <nope> does not exist.' },
      'rejected',
    ],
  ];
  it.each(rows.map(([label, answer, kind]) => [label, kind, answer] as const))(
    '%s is %s, tried exactly once (SDK retries off) and logged',
    async (_label, kind, answer) => {
      const { email } = harness.library();
      harness.ses.next(answer);
      const result = await email.send({ ...message, provider: 'provider_b' });
      expect(result).toMatchObject({ status: 'failed', ok: false, errorKind: kind, provider: 'provider_b' });
      expect(harness.ses.requests).toHaveLength(1);
      const [row] = await harness.rows();
      expect(row).toMatchObject({ status: 'failed', error_kind: kind, provider: 'provider_b' });
    },
  );

  it('is unavailable, without a crash, when no credentials can be found', async () => {
    const saved = { ...process.env };
    // Only the SDK's default chain reads these; keep it off the developer's own credentials and the metadata service.
    Object.assign(process.env, { AWS_EC2_METADATA_DISABLED: 'true', AWS_CONFIG_FILE: '/nonexistent', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent' });
    for (const name of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_PROFILE',
      'AWS_CONTAINER_CREDENTIALS_FULL_URI',
      'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
      'AWS_WEB_IDENTITY_TOKEN_FILE',
    ])
      delete process.env[name];
    try {
      const { email } = harness.library({ CLOUD_ACCESS_KEY_ID: undefined, CLOUD_SECRET_ACCESS_KEY: undefined });
      const result = await email.send({ ...message, provider: 'provider_b' });
      expect(result).toMatchObject({ status: 'failed', errorKind: 'unavailable', provider: 'provider_b' });
      expect(harness.ses.requests).toHaveLength(0);
    } finally {
      process.env = saved;
    }
  });

  it('signs with the CLOUD_* credentials, session token included', async () => {
    const { email } = harness.library({ CLOUD_SESSION_TOKEN: 'session-token-1' });
    expect(await email.send({ ...message, provider: 'provider_b' })).toMatchObject({ status: 'sent', provider: 'provider_b' });
    const headers = harness.ses.requests[0]!.headers;
    expect(headers.authorization).toContain('Credential=AKIAFOLIOTEST/');
    expect(headers['x-amz-security-token']).toBe('session-token-1');
  });
});

describe('sendEmail: success', () => {
  it('sends through provider A with an idempotency key, the log id in tags and header, and logs one row with its cost', async () => {
    const { email } = harness.library({ EMAIL_PROVIDER_A_COST_USD: '0.0009' });
    const result = await email.send({ ...message, source: 'api:test', tags: [{ name: 'kind', value: 'ready' }], idempotencyKey: 'file-ready/42' });
    expect(result).toMatchObject({ status: 'sent', ok: true, provider: 'provider_a', failedOver: false });
    if (result.status !== 'sent') throw new Error('not sent');
    const request = harness.resend.requests[0]!;
    expect(request.headers['idempotency-key']).toBe('file-ready/42');
    expect(request.json).toMatchObject({
      to: ['Reader <reader@example.com>'],
      from: 'Folio <no-reply@folio.example>',
      headers: { 'X-Folio-Log-Id': result.id },
      tags: [
        { name: 'kind', value: 'ready' },
        { name: 'folio_log_id', value: result.id },
      ],
    });
    expect(harness.resend.delivered[0]!.id).toBe(result.providerMessageId);
    expect(await harness.rows()).toEqual([
      expect.objectContaining({
        id: result.id,
        status: 'sent',
        category: 'transactional',
        source: 'api:test',
        provider: 'provider_a',
        provider_message_id: result.providerMessageId,
        failed_over: false,
        idempotency_key: 'file-ready/42',
        attempt: 1,
        to_addresses: ['reader@example.com'],
        from_address: 'Folio <no-reply@folio.example>',
        subject: 'Your file is ready',
        tags: { kind: 'ready', folio_log_id: result.id },
        cost_usd: '0.000900',
      }),
    ]);
  });

  it('uses the send-log id as the idempotency key when the caller gives none', async () => {
    const { email } = harness.library();
    const result = await email.send(message);
    expect(harness.resend.requests[0]!.headers['idempotency-key']).toBe(result.id);
  });

  it('sends through provider B with its configuration set, tags, header, cc/bcc, Reply-To and attachments', async () => {
    const { email } = harness.library({ EMAIL_PRIMARY: 'provider_b', EMAIL_CLOUD_CONFIGURATION_SET: 'transactional' });
    const result = await email.send({
      ...message,
      cc: 'copy@example.com',
      bcc: ['hidden@example.com'],
      replyTo: 'support@folio.example',
      attachments: [{ filename: 'report.html', content: Buffer.from('<h1>Report</h1>'), contentType: 'text/html' }],
    });
    expect(result).toMatchObject({ status: 'sent', provider: 'provider_b' });
    const body = harness.ses.requests[0]!.json as SesSendEmailBody;
    expect(body).toMatchObject({
      FromEmailAddress: 'Folio <no-reply@folio.example>',
      Destination: { ToAddresses: ['Reader <reader@example.com>'], CcAddresses: ['copy@example.com'], BccAddresses: ['hidden@example.com'] },
      ReplyToAddresses: ['support@folio.example'],
      ConfigurationSetName: 'transactional',
      EmailTags: [{ Name: 'folio_log_id', Value: result.id }],
    });
    expect(body.Content?.Simple?.Headers).toEqual([{ Name: 'X-Folio-Log-Id', Value: result.id }]);
    expect(body.Content?.Simple?.Attachments?.[0]).toMatchObject({ FileName: 'report.html', RawContent: Buffer.from('<h1>Report</h1>').toString('base64') });
    const [row] = await harness.rows();
    expect(row).toMatchObject({
      provider: 'provider_b',
      configuration_set: 'transactional',
      cc_addresses: ['copy@example.com'],
      bcc_addresses: ['hidden@example.com'],
    });
  });

  it('lets the request pick the configuration set', async () => {
    const { email } = harness.library({ EMAIL_CLOUD_CONFIGURATION_SET: 'transactional' });
    await email.send({ ...message, provider: 'provider_b', cloudConfigurationSet: 'outreach' });
    expect((harness.ses.requests[0]!.json as SesSendEmailBody).ConfigurationSetName).toBe('outreach');
  });

  it('answers failed, without a provider call or a throw, for a request it cannot send', async () => {
    const { email } = harness.library();
    expect(await email.send({ ...message, to: 'not-an-address' })).toMatchObject({
      status: 'failed',
      errorKind: 'rejected',
      error: 'Invalid to address: not-an-address',
    });
    expect(await email.send({ ...message, text: undefined, html: undefined })).toMatchObject({ status: 'failed', errorKind: 'rejected' });
    expect(await email.send(null as never)).toMatchObject({ status: 'failed', ok: false });
    expect(harness.resend.requests).toHaveLength(0);
  });
});

describe('sendEmail: failover', () => {
  it('fails over once to provider B when provider A is unavailable, writing one row with failed_over and a failover log line', async () => {
    const { email, deps } = harness.library({ EMAIL_FALLBACK: 'provider_b' });
    harness.resend.next({ kind: 'error', status: 503 });
    const result = await email.send(message);
    expect(result).toMatchObject({ status: 'sent', ok: true, provider: 'provider_b', failedOver: true });
    expect(harness.resend.requests).toHaveLength(1);
    expect(harness.ses.delivered).toHaveLength(1);
    const rows = await harness.rows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: result.id, status: 'sent', provider: 'provider_b', failed_over: true });
    const failovers = harness.logs.filter((line) => line.event === 'email_failover');
    expect(failovers).toEqual([expect.objectContaining({ from: 'provider_a', to: 'provider_b', logId: result.id })]);
    expect((await deps.metrics.emailFailovers.get()).values).toEqual([expect.objectContaining({ value: 1, labels: { from: 'provider_a', to: 'provider_b' } })]);
  });

  it('fails over to provider A when provider B has not verified the sender identity', async () => {
    const { email } = harness.library({ EMAIL_PRIMARY: 'provider_b', EMAIL_FALLBACK: 'provider_a' });
    harness.ses.next({ kind: 'error', type: 'MessageRejected', message: 'Email address is not verified. The following identities failed the check' });
    const result = await email.send(message);
    expect(result).toMatchObject({ status: 'sent', ok: true, provider: 'provider_a', failedOver: true });
    expect(harness.resend.delivered).toHaveLength(1);
  });

  it('fails over only once: both unavailable is failed/unavailable with failed_over set', async () => {
    const { email } = harness.library({ EMAIL_FALLBACK: 'provider_b' });
    harness.resend.next({ kind: 'error', status: 429 });
    harness.ses.next({ kind: 'error', type: 'SendingPausedException' });
    const result = await email.send(message);
    expect(result).toMatchObject({ status: 'failed', errorKind: 'unavailable', provider: 'provider_b', failedOver: true });
    expect(harness.resend.requests).toHaveLength(1);
    expect(harness.ses.requests).toHaveLength(1);
    expect(await harness.rows()).toEqual([expect.objectContaining({ status: 'failed', error_kind: 'unavailable', failed_over: true })]);
  });

  it.each([
    ['ambiguous (500)', { kind: 'error', status: 500 } as ResendAnswer, 'ambiguous'],
    ['ambiguous (timeout)', { kind: 'delay', ms: PAST_TIMEOUT_MS } as ResendAnswer, 'ambiguous'],
    ['rejected (422)', { kind: 'error', status: 422 } as ResendAnswer, 'rejected'],
  ])('never fails over on %s', async (_label, answer, kind) => {
    const { email } = harness.library({ EMAIL_FALLBACK: 'provider_b' });
    harness.resend.next(answer);
    expect(await email.send(message)).toMatchObject({ status: 'failed', errorKind: kind, failedOver: false });
    expect(harness.ses.requests).toHaveLength(0);
  });

  it('never fails over a pinned send', async () => {
    const { email } = harness.library({ EMAIL_FALLBACK: 'provider_b' });
    harness.resend.next({ kind: 'error', status: 503 });
    expect(await email.send({ ...message, provider: 'provider_a' })).toMatchObject({ status: 'failed', errorKind: 'unavailable', failedOver: false });
    expect(harness.ses.requests).toHaveLength(0);
    expect(harness.logs.filter((line) => line.event === 'email_failover')).toHaveLength(0);
  });

  it('ignores a fallback equal to the primary', async () => {
    const { email } = harness.library({ EMAIL_PRIMARY: 'provider_a', EMAIL_FALLBACK: 'provider_a' });
    harness.resend.next({ kind: 'error', status: 503 });
    expect(await email.send(message)).toMatchObject({ status: 'failed', errorKind: 'unavailable' });
    expect(harness.resend.requests).toHaveLength(1);
  });

  it('takes the provider pair from the settings row over the environment, read once at start', async () => {
    const db = harness.database.db;
    await db.query(
      sql.type(z.object({}))`insert into settings (key, value) values ('email.providers', ${sql.jsonb({ primary: 'provider_b', fallback: 'provider_a' })})`,
    );
    const { email } = harness.library({ EMAIL_PRIMARY: 'provider_a' });
    harness.ses.next({ kind: 'error', type: 'TooManyRequestsException' });
    expect(await email.send(message)).toMatchObject({ status: 'sent', provider: 'provider_a', failedOver: true });
    expect(harness.ses.requests).toHaveLength(1);
    // Kept until restart: a changed row is not seen by this library...
    await db.query(sql.type(z.object({}))`update settings set value = ${sql.jsonb({ primary: 'provider_a', fallback: null })} where key = 'email.providers'`);
    expect(await email.send(message)).toMatchObject({ provider: 'provider_b' });
    // ...but is by the next one.
    expect(await harness.library().email.send(message)).toMatchObject({ provider: 'provider_a' });
  });
});

describe('sendEmail: suppressions', () => {
  const matrix: Array<['auth' | 'alert' | 'transactional' | 'notification' | 'marketing', 'hard_bounce' | 'complaint' | 'manual', boolean]> = [
    ['auth', 'complaint', false],
    ['auth', 'hard_bounce', true],
    ['auth', 'manual', true],
    ['alert', 'complaint', false],
    ['alert', 'hard_bounce', false],
    ['alert', 'manual', true],
    ['transactional', 'complaint', true],
    ['transactional', 'hard_bounce', true],
    ['transactional', 'manual', true],
    ['notification', 'complaint', true],
    ['notification', 'hard_bounce', true],
    ['notification', 'manual', true],
    ['marketing', 'complaint', true],
    ['marketing', 'hard_bounce', true],
    ['marketing', 'manual', true],
  ];
  it.each(matrix)('%s mail to an address suppressed for %s: blocked=%s', async (category, reason, blocked) => {
    const { email } = harness.library();
    await suppress(harness, 'reader@example.com', reason);
    const result = await email.send({ ...message, category });
    if (blocked) {
      const words = { hard_bounce: 'hard bounce', complaint: 'complaint', manual: 'manual' }[reason];
      expect(result).toEqual({
        status: 'suppressed',
        ok: false,
        error: `Recipient suppressed: ${words}`,
        suppressedRecipients: ['reader@example.com'],
        id: expect.any(String),
      });
      expect(harness.resend.requests).toHaveLength(0);
      expect(await harness.rows()).toEqual([
        expect.objectContaining({ id: result.id, status: 'suppressed', provider: null, category, to_addresses: ['reader@example.com'] }),
      ]);
    } else {
      expect(result).toMatchObject({ status: 'sent', ok: true });
    }
  });

  it('drops blocked recipients and sends to the rest', async () => {
    const { email } = harness.library();
    await suppress(harness, 'gone@example.com', 'hard_bounce');
    await suppress(harness, 'angry@example.com', 'complaint');
    const result = await email.send({ ...message, to: ['Gone <GONE@example.com>', 'stays@example.com'], cc: 'angry@example.com', bcc: 'audit@example.com' });
    expect(result).toMatchObject({ status: 'sent', ok: true, suppressedRecipients: ['gone@example.com', 'angry@example.com'] });
    expect(harness.resend.requests[0]!.json).toMatchObject({ to: ['stays@example.com'], bcc: ['audit@example.com'] });
    expect(harness.resend.requests[0]!.json).not.toHaveProperty('cc');
    expect(await harness.rows()).toEqual([
      expect.objectContaining({ status: 'sent', to_addresses: ['stays@example.com'], cc_addresses: [], bcc_addresses: ['audit@example.com'] }),
    ]);
  });

  it('sends nothing when every To is blocked, even with unblocked cc', async () => {
    const { email } = harness.library();
    await suppress(harness, 'reader@example.com', 'manual');
    expect(await email.send({ ...message, cc: 'boss@example.com' })).toMatchObject({ status: 'suppressed', error: 'Recipient suppressed: manual' });
    expect(harness.resend.requests).toHaveLength(0);
  });

  it('answers concurrent sends each with their own suppressions and log rows', async () => {
    const { email } = harness.library();
    await suppress(harness, 'reader3@example.com', 'hard_bounce');
    await suppress(harness, 'reader7@example.com', 'manual');
    const results = await Promise.all(Array.from({ length: 24 }, (_, n) => email.send({ ...message, to: `reader${n}@example.com`, subject: `Note ${n}` })));
    expect(results.map((result) => result.status)).toEqual(Array.from({ length: 24 }, (_, n) => (n === 3 || n === 7 ? 'suppressed' : 'sent')));
    const rows = await harness.rows();
    expect(rows).toHaveLength(24);
    for (const [n, result] of results.entries()) {
      expect(rows.find((row) => row.id === result.id)).toMatchObject({ subject: `Note ${n}`, to_addresses: [`reader${n}@example.com`], status: result.status });
    }
  });

  it('fails open when the lookup times out', async () => {
    const { email } = harness.library();
    await suppress(harness, 'reader@example.com', 'hard_bounce');
    await withTableLocked('email_suppressions', async () => {
      const result = await email.send(message);
      expect(result).toMatchObject({ status: 'sent', ok: true });
    });
    expect(harness.resend.delivered).toHaveLength(1);
    expect(harness.logs.some((line) => line.msg === 'email suppression lookup failed; sending without it' && line.timedOut === true)).toBe(true);
  });

  it('reports a timed-out log write and still answers with the send result', async () => {
    const { email } = harness.library();
    let result;
    await withTableLocked('email_log', async () => {
      result = await email.send(message);
    });
    expect(result).toMatchObject({ status: 'sent', ok: true, provider: 'provider_a' });
    expect(result).not.toHaveProperty('id');
    expect(harness.logs.filter((line) => line.event === 'email_log_write_failed')).toEqual([expect.objectContaining({ timedOut: true, status: 'sent' })]);
  });

  it('without a database, warns once and sends without the log or suppression checks', async () => {
    const { email } = harness.library({ DATABASE_URL: undefined, DB_URL: undefined });
    await suppress(harness, 'reader@example.com', 'manual');
    const first = await email.send(message);
    const second = await email.send(message);
    expect(first).toMatchObject({ status: 'sent' });
    expect(second).toMatchObject({ status: 'sent' });
    expect(first).not.toHaveProperty('id');
    expect(harness.resend.delivered).toHaveLength(2);
    expect(await harness.rows()).toHaveLength(0);
    expect(harness.logs.filter((line) => String(line.msg).includes('no database configured'))).toHaveLength(1);
  });
});

describe('sendEmail: From rewrite', () => {
  it.each([
    ['Folio Team <hello@old.example>', 'Folio Team <hello@folio.example>'],
    ['"Folio, Inc." <Billing@mail.old.example>', '"Folio, Inc." <Billing@folio.example>'],
    ['alerts@deep.mail.OLD.example', 'alerts@folio.example'],
    ['Someone <someone@notold.example>', 'Someone <someone@notold.example>'],
    ['other@folio.example', 'other@folio.example'],
  ])('%s is sent as %s', async (from, sent) => {
    const { email } = harness.library({ EMAIL_RETIRED_DOMAIN: 'old.example' });
    await email.send({ ...message, from });
    expect((harness.resend.requests[0]!.json as { from: string }).from).toBe(sent);
  });

  it('never rewrites Reply-To or recipients', async () => {
    const { email } = harness.library({ EMAIL_RETIRED_DOMAIN: 'old.example' });
    await email.send({ ...message, from: 'a@old.example', to: 'b@old.example', replyTo: 'c@old.example' });
    expect(harness.resend.requests[0]!.json).toMatchObject({ from: 'a@folio.example', to: ['b@old.example'], reply_to: ['c@old.example'] });
  });
});

/** Holds an ACCESS EXCLUSIVE lock on a table from another session while `run` goes, so statements on it hang. */
async function withTableLocked(table: 'email_log' | 'email_suppressions', run: () => Promise<void>) {
  const client = new pg.Client({ connectionString: harness.database.url });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`lock table ${table} in access exclusive mode`);
    await run();
  } finally {
    await client.query('rollback');
    await client.end();
  }
}
