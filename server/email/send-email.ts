import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.ts';
import { asList, parseMailbox, rewriteFrom, type Mailbox } from './addresses.ts';
import { attemptLogId, DEFER_DELAYS_SECONDS, DEFER_RECEIVE_LIMIT, enqueueDeferredSend, type DeferQueues, type DeferredSend } from './email.jobs.ts';
import { sendLogRowExists, type SendLogEntry, type SuppressionRow } from './email.queries.ts';
import { withinTimeout } from './hook-timeout.ts';
import type { ProviderPair } from './provider-pair.ts';
import type { EmailProvider, OutboundMessage, ProviderOutcome } from './providers/provider.ts';
import { applySuppressions, suppressedError, type Blocked, type Recipients } from './suppressions.ts';
import { SendRequest, type FailureKind, type ParsedSendRequest, type ProviderName, type SendResult } from './types.ts';

/** What the library holds between sends: providers built once, the pair read once, the hook timeout. */
export type EmailRuntime = {
  providers: Record<ProviderName, EmailProvider>;
  providerPair: () => Promise<ProviderPair>;
  hookTimeoutMs: number;
  /** The suppressions among these bare addresses (from the brief cache, else one query shared with concurrent sends). */
  lookupSuppressions: (addresses: string[]) => Promise<SuppressionRow[]>;
  /** record_email_send for one entry (batched with concurrent sends); the id of the row that holds it. */
  writeLog: (entry: SendLogEntry) => Promise<string>;
  deferQueues?: DeferQueues;
  /** Creates the defer queues on first use (the API process enqueues too, before any worker ran). */
  ensureDeferQueues: () => Promise<void>;
};

export type EmailDeps = Pick<Deps, 'config' | 'db' | 'boss' | 'log' | 'metrics'> & { email: EmailRuntime };

/** Where a deferred retry stands; absent for a first attempt. */
export type RetryContext = { attempt: number; correlationId: string; failedOver: boolean };

// "Warns once per process" (specification): a process-wide fact, so a process-wide flag.
let warnedNoDatabase = false;

/**
 * Sends one email through the library (specification: "Library send request
 * and result"). Never throws: every outcome, including a bug, is a result.
 */
export async function sendEmail(deps: EmailDeps, request: SendRequest): Promise<SendResult> {
  try {
    return await deliverEmail(deps, request);
  } catch (error) {
    deps.log.error({ err: error }, 'email library failed unexpectedly');
    // It may have failed after a provider took the message: say so.
    return { status: 'failed', ok: false, error: 'Internal error in the email library', errorKind: 'ambiguous', failedOver: false };
  }
}

/**
 * The send itself: validate, rewrite From, drop suppressed recipients, try the
 * primary, fail over once on `unavailable`, defer on `ambiguous`, log one row.
 * Throws only on a bug, which the deferred-retry worker wants to see (the job
 * is then received again and dead-lettered after the third receive).
 */
export async function deliverEmail(deps: EmailDeps, input: SendRequest, retry?: RetryContext): Promise<SendResult> {
  const { config, log } = deps;
  const parsed = SendRequest.safeParse(input);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'request'}: ${issue.message}`).join('; ');
    return count(deps, { status: 'failed', ok: false, error: `Invalid email request: ${detail}`, errorKind: 'rejected', failedOver: false });
  }
  const request = parsed.data;
  const recipients: Recipients = { to: [], cc: [], bcc: [] };
  for (const field of ['to', 'cc', 'bcc'] as const) {
    for (const value of asList(request[field])) {
      const mailbox = parseMailbox(value);
      if (!mailbox) return count(deps, { status: 'failed', ok: false, error: `Invalid ${field} address: ${value}`, errorKind: 'rejected', failedOver: false });
      recipients[field].push(mailbox);
    }
  }
  const replyTo = asList(request.replyTo);
  const from = rewriteFrom(request.from ?? config.email.defaultFrom, config.email.retiredDomain, config.email.senderDomain);
  const badAddress = [from, ...replyTo].find((value) => !parseMailbox(value));
  if (badAddress !== undefined)
    return count(deps, { status: 'failed', ok: false, error: `Invalid address: ${badAddress}`, errorKind: 'rejected', failedOver: false });

  const logging = config.email.loggingEnabled;
  if (!logging && !warnedNoDatabase) {
    warnedNoDatabase = true;
    log.warn('email library: no database configured (DB_URL with DB_SERVICE_KEY, or DATABASE_URL); sending without the send log or suppression checks');
  }

  const attempt = retry?.attempt ?? 1;
  const correlationId = retry?.correlationId ?? randomUUID();
  const id = attemptLogId(correlationId, attempt);
  const idempotencyKey = request.idempotencyKey ?? correlationId;
  const pair = await deps.email.providerPair();
  const primary = request.provider ?? pair.primary;
  const fallback = request.provider ? undefined : pair.fallback;
  const tags = providerTags(request.tags ?? [], correlationId);
  const configurationSet = request.cloudConfigurationSet ?? config.email.providerB.configurationSet;

  let kept = recipients;
  let blocked: Blocked[] = [];
  if (logging) {
    const addresses = [...new Set([...recipients.to, ...recipients.cc, ...recipients.bcc].map((mailbox) => mailbox.address))];
    const lookup = await withinTimeout(deps.email.lookupSuppressions(addresses), deps.email.hookTimeoutMs);
    if (lookup.ok) {
      const applied = applySuppressions(recipients, new Map(lookup.value.map((row) => [row.email, row.reason])), request.category);
      kept = applied.kept;
      blocked = applied.blocked;
      if (applied.allToBlockedBy) {
        const error = suppressedError(applied.allToBlockedBy);
        const entry = logEntry(
          { id, request, recipients, from, tags, idempotencyKey, attempt, failedOver: retry?.failedOver ?? false },
          { status: 'suppressed', error },
        );
        return finish(deps, entry, { status: 'suppressed', ok: false, error, suppressedRecipients: blocked.map((item) => item.address) });
      }
    } else {
      // Fail open: a slow or broken lookup must not stop mail.
      log.warn({ err: lookup.error, timedOut: lookup.timedOut, logId: id }, 'email suppression lookup failed; sending without it');
    }
  }

  const message: OutboundMessage = {
    from,
    to: kept.to.map((mailbox) => mailbox.original),
    cc: kept.cc.map((mailbox) => mailbox.original),
    bcc: kept.bcc.map((mailbox) => mailbox.original),
    replyTo,
    subject: request.subject,
    html: request.html,
    text: request.text,
    headers: { ...request.headers, 'X-Folio-Log-Id': correlationId },
    tags,
    attachments: (request.attachments ?? []).map((file) => ({
      filename: file.filename,
      content: typeof file.content === 'string' ? file.content : Buffer.from(file.content).toString('base64'),
      contentType: file.contentType,
    })),
    configurationSet,
  };

  let provider = primary;
  let failedOver = retry?.failedOver ?? false;
  let outcome: ProviderOutcome = await deps.email.providers[primary].send(message, { idempotencyKey });
  if (!outcome.ok && outcome.kind === 'unavailable' && fallback) {
    // One line per failover: the monitor alarms on 3 of them in 15 minutes.
    log.warn({ event: 'email_failover', from: primary, to: fallback, reason: outcome.error, logId: id, idempotencyKey }, 'email failover');
    deps.metrics.emailFailovers.inc({ from: primary, to: fallback });
    provider = fallback;
    failedOver = true;
    outcome = await deps.email.providers[fallback].send(message, { idempotencyKey });
  }

  const base = { id, request, recipients: kept, from, tags, idempotencyKey, attempt, failedOver, provider, configurationSet };
  const suppressedRecipients = blocked.length > 0 ? { suppressedRecipients: blocked.map((item) => item.address) } : {};
  if (outcome.ok) {
    const cost = provider === 'provider_a' ? config.email.providerA.costUsd : config.email.providerB.costUsd;
    const entry = logEntry(base, { status: 'sent', provider_message_id: outcome.messageId, cost_usd: cost });
    return finish(deps, entry, { status: 'sent', ok: true, provider, providerMessageId: outcome.messageId, failedOver, ...suppressedRecipients });
  }
  if (outcome.kind !== 'ambiguous' || !deps.email.deferQueues) {
    return fail(deps, base, outcome.kind, outcome.error);
  }
  if (attempt > DEFER_DELAYS_SECONDS.length) {
    log.error({ logId: id, idempotencyKey, attempt, reason: outcome.error }, 'deferred email: last retry was ambiguous too; giving up');
    return fail(deps, base, 'ambiguous', `defer failed: ${outcome.error}`);
  }
  const job: DeferredSend = {
    request: { ...storedRequest(request, message), provider, idempotencyKey, from },
    correlationId,
    attempt: attempt + 1,
    failedOver,
  };
  let queued: { queued: true } | { queued: false; error: string };
  try {
    await deps.email.ensureDeferQueues();
    queued = await enqueueDeferredSend(deps.boss, deps.email.deferQueues, job);
  } catch (error) {
    queued = { queued: false, error: `could not queue the retry: ${(error as Error).message}` };
  }
  if (!queued.queued) return fail(deps, base, 'ambiguous', `${queued.error}; ${outcome.error}`);
  deps.metrics.emailDeferred.inc();
  log.info({ logId: id, idempotencyKey, provider, nextAttempt: job.attempt, reason: outcome.error }, 'email deferred for a same-key retry');
  const entry = logEntry(base, { status: 'deferred', error_kind: 'ambiguous', error: outcome.error });
  return finish(deps, entry, { status: 'deferred', ok: true, provider, failedOver, ...suppressedRecipients });
}

/**
 * A deferred job that was received three times without finishing. Counted for
 * the dead-letter alarm and logged `failed`, unless the crashed receive had
 * already logged its own outcome.
 */
export async function recordDeadLetteredSend(deps: EmailDeps, job: DeferredSend): Promise<void> {
  const id = attemptLogId(job.correlationId, job.attempt);
  deps.metrics.emailDeferredDeadLetters.inc();
  deps.log.error(
    { event: 'email_deferred_dead_letter', logId: id, attempt: job.attempt, idempotencyKey: job.request.idempotencyKey },
    'deferred email reached the dead-letter queue',
  );
  if (!deps.config.email.loggingEnabled || (await sendLogRowExists(deps.db, id))) return;
  const recipients: Recipients = { to: [], cc: [], bcc: [] };
  for (const field of ['to', 'cc', 'bcc'] as const) {
    recipients[field] = asList(job.request[field]).flatMap((value) => parseMailbox(value) ?? []);
  }
  const request = SendRequest.parse(job.request);
  const base = {
    id,
    request,
    recipients,
    from: job.request.from ?? '',
    tags: providerTags(request.tags ?? [], job.correlationId),
    idempotencyKey: job.request.idempotencyKey ?? job.correlationId,
    attempt: job.attempt,
    failedOver: job.failedOver,
    provider: job.request.provider,
  };
  await deps.email.writeLog(logEntry(base, { status: 'failed', error_kind: 'ambiguous', error: `defer dead-lettered after ${DEFER_RECEIVE_LIMIT} receives` }));
}

/** Provider tags: the caller's (reduced to the characters both providers allow) plus folio_log_id. */
function providerTags(tags: Array<{ name: string; value: string }>, correlationId: string) {
  const clean = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 256);
  return [
    ...tags.map((tag) => ({ name: clean(tag.name), value: clean(tag.value) })).filter((tag) => tag.name !== 'folio_log_id'),
    { name: 'folio_log_id', value: correlationId },
  ];
}

/** The request as a deferred job stores it: attachments already in base64, everything else as given. */
function storedRequest(request: ParsedSendRequest, message: OutboundMessage): DeferredSend['request'] {
  const { attachments: _attachments, ...rest } = request;
  return message.attachments.length > 0 ? { ...rest, attachments: message.attachments } : rest;
}

type LogBase = {
  id: string;
  request: ParsedSendRequest;
  recipients: Recipients;
  from: string;
  tags: Array<{ name: string; value: string }>;
  idempotencyKey: string;
  attempt: number;
  failedOver: boolean;
  provider?: ProviderName;
  configurationSet?: string;
};

function logEntry(base: LogBase, fields: Partial<SendLogEntry> & Pick<SendLogEntry, 'status'>): SendLogEntry {
  const bare = (list: Mailbox[]) => list.map((mailbox) => mailbox.address);
  return {
    id: base.id,
    category: base.request.category,
    source: base.request.source,
    provider: base.provider,
    failed_over: base.failedOver,
    idempotency_key: base.idempotencyKey,
    attempt: base.attempt,
    to: bare(base.recipients.to),
    cc: bare(base.recipients.cc),
    bcc: bare(base.recipients.bcc),
    from: base.from,
    subject: base.request.subject,
    tags: Object.fromEntries(base.tags.map((tag) => [tag.name, tag.value])),
    configuration_set: base.provider === 'provider_b' ? base.configurationSet : undefined,
    ...fields,
  };
}

function fail(deps: EmailDeps, base: LogBase, kind: FailureKind, error: string): Promise<SendResult> {
  const entry = logEntry(base, { status: 'failed', error_kind: kind, error });
  return finish(deps, entry, { status: 'failed', ok: false, error, errorKind: kind, provider: base.provider, failedOver: base.failedOver });
}

/** Writes the log row (bounded; a slow or failed write is reported and never changes the result), then counts. */
async function finish(deps: EmailDeps, entry: SendLogEntry, result: SendResult): Promise<SendResult> {
  if (deps.config.email.loggingEnabled) {
    const written = await withinTimeout(deps.email.writeLog(entry), deps.email.hookTimeoutMs);
    if (written.ok) result = { ...result, id: written.value };
    else
      deps.log.error(
        { event: 'email_log_write_failed', err: written.error, timedOut: written.timedOut, logId: entry.id, status: entry.status },
        'email send log write failed',
      );
  }
  return count(deps, result);
}

function count(deps: EmailDeps, result: SendResult): SendResult {
  deps.metrics.emailSends.inc({ provider: result.provider ?? 'none', status: result.status });
  return result;
}
