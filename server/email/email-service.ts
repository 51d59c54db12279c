import type { CoreDeps } from '../deps.ts';
import { createBatcher } from './batcher.ts';
import { createDeferQueues, deferQueueNames, type DeferredSend } from './email.jobs.ts';
import { findSuppressions, recordEmailSend, recordEmailSends, type SendLogEntry, type SuppressionRow } from './email.queries.ts';
import { HOOK_TIMEOUT_MS } from './hook-timeout.ts';
import { readProviderPair, type ProviderPair } from './provider-pair.ts';
import { ATTEMPT_TIMEOUT_MS } from './providers/provider.ts';
import { createResendProvider } from './providers/resend.ts';
import { createSesProvider } from './providers/ses.ts';
import { cachedSuppressionLookup } from './suppression-cache.ts';
import { deliverEmail, recordDeadLetteredSend, sendEmail, type EmailDeps, type EmailRuntime } from './send-email.ts';
import type { SendRequest, SendResult } from './types.ts';

export type EmailService = {
  /** The library send; never throws. */
  send(request: SendRequest): Promise<SendResult>;
  /** One deferred retry, for the queue worker: throws on a bug so the job is received again. */
  retryDeferred(job: DeferredSend): Promise<SendResult>;
  /** The dead-letter consumer's bookkeeping. */
  recordDeadLetter(job: DeferredSend): Promise<void>;
};

/** Shorter timeouts for tests and benchmarks; production uses the specification's 15 s and 2.5 s. */
export type EmailServiceOptions = { attemptTimeoutMs?: number; hookTimeoutMs?: number };

// Up to 64 sends share a round trip; two batches may be at the database at once.
const BATCHING = { maxBatch: 64, maxInFlight: 2 };

/**
 * Builds the library; server/services.ts does it once per process: both
 * provider clients, the provider pair read from the settings row on first
 * use and kept until restart (a read that fails is tried again next send), and
 * the suppression cache (server/email/suppression-cache.ts).
 */
export function createEmailService(deps: CoreDeps, options: EmailServiceOptions = {}): EmailService {
  const timeoutMs = options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const hookTimeoutMs = options.hookTimeoutMs ?? HOOK_TIMEOUT_MS;
  const { providerA, providerB } = deps.config.email;
  const deferQueues = deferQueueNames(deps.config);

  const lookupInDatabase = createBatcher<string[], SuppressionRow[]>(async (lists) => {
    const rows = await findSuppressions(deps.db, [...new Set(lists.flat())]);
    return lists.map((list) => {
      const wanted = new Set(list);
      return { status: 'fulfilled', value: rows.filter((row) => wanted.has(row.email)) };
    });
  }, BATCHING);
  const lookupSuppressions = cachedSuppressionLookup(lookupInDatabase);
  // The send waits for its log row (the result carries its id, and a row that
  // only sat in memory would be lost with the process); concurrent sends share
  // the round trip instead.
  const writeLog = createBatcher<SendLogEntry, string>(async (entries) => {
    try {
      return (await recordEmailSends(deps.db, entries)).map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      if (entries.length === 1) throw error;
      // One bad entry must not cost the others their rows.
      return Promise.allSettled(entries.map((entry) => recordEmailSend(deps.db, entry)));
    }
  }, BATCHING);

  let pair: Promise<ProviderPair> | undefined;
  let queuesReady: Promise<void> | undefined;
  const runtime: EmailRuntime = {
    providers: {
      provider_a: createResendProvider({ apiKey: providerA.apiKey, baseUrl: providerA.baseUrl, timeoutMs }),
      provider_b: createSesProvider({ ...providerB, timeoutMs }),
    },
    hookTimeoutMs,
    lookupSuppressions,
    writeLog,
    deferQueues,
    providerPair: () =>
      (pair ??= readProviderPair(deps, hookTimeoutMs).then(({ pair: read, settled }) => {
        if (!settled) pair = undefined;
        return read;
      })),
    ensureDeferQueues: () => {
      if (!deferQueues) return Promise.resolve();
      queuesReady ??= createDeferQueues(deps.boss, deferQueues).catch((error: unknown) => {
        queuesReady = undefined;
        throw error;
      });
      return queuesReady;
    },
  };
  const emailDeps: EmailDeps = { ...deps, email: runtime };
  return {
    send: (request) => sendEmail(emailDeps, request),
    retryDeferred: (job) => deliverEmail(emailDeps, job.request, { attempt: job.attempt, correlationId: job.correlationId, failedOver: job.failedOver }),
    recordDeadLetter: (job) => recordDeadLetteredSend(emailDeps, job),
  };
}
