import { afterAll } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../server/config.ts';
import { sql } from '../../server/db/database.ts';
import { systemClock, type CoreDeps } from '../../server/deps.ts';
import { createEmailService, type EmailService } from '../../server/email/email-service.ts';
import { createLog } from '../../server/log.ts';
import { createMetrics } from '../../server/metrics.ts';
import { startBoss, type Boss } from '../../server/queue/boss.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { startSesFake, type SesFake } from '../fakes/ses.ts';

const RESEND_KEY = 're_test_key';

/** Short library timeouts so timeout paths take milliseconds; the fakes' "delay" outlasts them. */
const ATTEMPT_TIMEOUT_MS = 400;
const HOOK_TIMEOUT_MS = 300;
export const PAST_TIMEOUT_MS = 1_500;

type LogLine = Record<string, unknown> & { level: number; msg?: string };

export type EmailHarness = {
  database: TestDatabase;
  boss: Boss;
  resend: ResendFake;
  ses: SesFake;
  /** Every log line written by libraries built with `library()`. */
  logs: LogLine[];
  /** A library over the shared database and fakes with this environment on top of the base one. */
  library: (env?: Record<string, string | undefined>) => { email: EmailService; deps: CoreDeps & { email: EmailService } };
  rows: () => Promise<LogRow[]>;
  reset: () => Promise<void>;
};

const LogRow = z.object({
  id: z.uuid(),
  status: z.string(),
  category: z.string(),
  source: z.string().nullable(),
  provider: z.string().nullable(),
  provider_message_id: z.string().nullable(),
  failed_over: z.boolean(),
  error_kind: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  attempt: z.number(),
  to_addresses: z.array(z.string()),
  cc_addresses: z.array(z.string()),
  bcc_addresses: z.array(z.string()),
  from_address: z.string().nullable(),
  subject: z.string().nullable(),
  tags: z.record(z.string(), z.string()).nullable(),
  configuration_set: z.string().nullable(),
  last_event: z.string().nullable(),
  error: z.string().nullable(),
  cost_usd: z.string().nullable(),
  created_at: z.date(),
});
type LogRow = z.infer<typeof LogRow>;

/**
 * A database of this file's own, pg-boss in it (no workers: tests fetch the
 * jobs themselves), and both provider fakes. Libraries built from it reach the
 * fakes through the real SDKs.
 */
export async function startEmailHarness(): Promise<EmailHarness> {
  const database = await createTestDatabase();
  const [resend, ses] = await Promise.all([startResendFake({ apiKey: RESEND_KEY }), startSesFake()]);
  const boss = await startBoss(database.url, { supervise: false, schedule: false, migrate: false });
  const logs: LogLine[] = [];
  const log = createLog({ level: 'debug', destination: { write: (line: string) => logs.push(JSON.parse(line)) } as unknown as NodeJS.WritableStream });
  afterAll(async () => {
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await Promise.all([resend.close(), ses.close()]);
  });
  const baseEnv = {
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    PROVIDER_A_API_KEY: RESEND_KEY,
    PROVIDER_A_BASE_URL: resend.url,
    PROVIDER_B_ENDPOINT: ses.url,
    CLOUD_ACCESS_KEY_ID: 'AKIAFOLIOTEST',
    CLOUD_SECRET_ACCESS_KEY: 'folio-test-secret',
    EMAIL_SENDER_DOMAIN: 'folio.example',
  };
  return {
    database,
    boss,
    resend,
    ses,
    logs,
    library: (env = {}) => {
      const config = loadConfig({ ...baseEnv, ...env });
      const core: CoreDeps = { config, db: database.db, boss, log, clock: systemClock, databaseUrl: database.url, metrics: createMetrics() };
      const email = createEmailService(core, { attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, hookTimeoutMs: HOOK_TIMEOUT_MS });
      return { email, deps: { ...core, email } };
    },
    rows: () => database.db.any(sql.type(LogRow)`select *, cost_usd::text as cost_usd from email_log order by created_at, attempt`).then((rows) => [...rows]),
    reset: async () => {
      resend.reset();
      ses.reset();
      logs.length = 0;
      await database.db.query(sql.type(z.object({}))`truncate email_log, email_suppressions, settings`);
    },
  };
}

export async function suppress(harness: EmailHarness, email: string, reason: 'hard_bounce' | 'complaint' | 'manual') {
  await harness.database.db.query(sql.type(z.object({}))`insert into email_suppressions (email, reason, source) values (${email}, ${reason}, 'test')`);
}
