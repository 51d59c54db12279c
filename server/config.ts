import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/**
 * Every environment variable Folio reads, parsed once. A wrong value stops the
 * process at start with the variable's name; nothing else in the code reads
 * process.env. Grouped by area so each area's settings stay together.
 */

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));
const optionalUrl = optionalText.pipe(z.url().optional());
const flag = (fallback: boolean) =>
  optionalText.transform((value, ctx) => {
    if (value === undefined) return fallback;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off)$/i.test(value)) return false;
    ctx.addIssue({ code: 'custom', message: 'expected true/false' });
    return z.NEVER;
  });
const integer = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  optionalText.pipe(z.coerce.number<string | undefined>().int().min(min).max(max).optional()).transform((value) => value ?? fallback);
const providerName = z.enum(['provider_a', 'provider_b']);

const EnvSchema = z.object({
  NODE_ENV: optionalText,
  PORT: integer(3000, 0, 65535),
  HOST: optionalText,
  PUBLIC_BASE_URL: optionalUrl,
  FOLIO_DATA_DIR: optionalText,
  LOG_LEVEL: optionalText.pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional()),
  FOLIO_WORKERS: flag(true),
  SHUTDOWN_GRACE_MS: integer(20_000, 0),

  // database
  DATABASE_URL: optionalText,
  DB_URL: optionalText,
  DB_SERVICE_KEY: optionalText,
  DATABASE_POOL_SIZE: integer(10, 1, 200),

  // authentication and secrets
  AUTH_JWT_SECRET: optionalText,
  AUTH_JWKS_URL: optionalUrl,
  AUTH_JWT_ISSUER: optionalText,
  AUTH_JWT_AUDIENCE: optionalText,
  PROXY_SHARED_SECRET: optionalText,
  DOWNLOAD_TOKEN_SECRET: optionalText,
  WEBHOOK_SECRET_KEY: optionalText,
  ADMIN_EMAILS: optionalText,

  // email library
  EMAIL_PRIMARY: optionalText.pipe(providerName.optional()),
  EMAIL_FALLBACK: optionalText.pipe(providerName.optional()),
  PROVIDER_A_API_KEY: optionalText,
  PROVIDER_A_BASE_URL: optionalUrl,
  PROVIDER_A_WEBHOOK_SECRET: optionalText,
  PROVIDER_B_ENDPOINT: optionalUrl,
  CLOUD_REGION: optionalText,
  CLOUD_ACCESS_KEY_ID: optionalText,
  CLOUD_SECRET_ACCESS_KEY: optionalText,
  CLOUD_SESSION_TOKEN: optionalText,
  EMAIL_CLOUD_CONFIGURATION_SET: optionalText,
  CLOUD_CONFIGURATION_SET: optionalText,
  CLOUD_WEBHOOK_SECRET: optionalText,
  EMAIL_DEFER_QUEUE: optionalText,
  EMAIL_DEFER_QUEUE_URL: optionalText,
  EMAIL_SENDER_DOMAIN: optionalText,
  EMAIL_RETIRED_DOMAIN: optionalText,
  EMAIL_DEFAULT_FROM: optionalText,
  EMAIL_PROVIDER_A_COST_USD: optionalText.pipe(z.coerce.number<string | undefined>().nonnegative().optional()),
  EMAIL_PROVIDER_B_COST_USD: optionalText.pipe(z.coerce.number<string | undefined>().nonnegative().optional()),

  // product mail
  CONTACT_EMAIL: optionalText,
  PURCHASE_URL: optionalUrl,

  // alerts
  ALERT_EMAIL: optionalText,
  MESSENGER_API_BASE_URL: optionalUrl,
  MESSENGER_BOT_TOKEN: optionalText,
  MESSENGER_CHAT_ID: optionalText,
  INTERNAL_ALERT_URL: optionalUrl,
  INTERNAL_SEND_EMAIL_URL: optionalUrl,

  // conversion
  BEDROCK_REGION: optionalText,
  BEDROCK_ENDPOINT: optionalUrl,
  BEDROCK_CONTROL_ENDPOINT: optionalUrl,
  BEDROCK_MODEL_ID: optionalText,
  BEDROCK_MAX_TOKENS: integer(8192, 1),
  BEDROCK_TEMPERATURE: optionalText.pipe(z.coerce.number<string | undefined>().min(0).max(1).optional()),
  PARSER_API_URL: optionalUrl,
  PARSER_API_KEY: optionalText,
  CONVERSION_POOL_SIZE: integer(0, 0, 64),
  UPLOAD_MAX_BYTES: integer(200 * 1024 * 1024, 1),
  UPLOAD_MAX_PAGES: integer(5000, 1),
  CHUNK_PAGES: integer(10, 1, 1000),
  CHUNK_CONCURRENCY: integer(2, 1, 64),
  CHUNK_HEARTBEAT_INTERVAL_MS: integer(5000, 50),
  HIGH_FIDELITY_CREDIT_MULTIPLIER: integer(1, 1, 1),

  // batch lane
  BATCH_CONVERSION_ENABLED: flag(false),
  BATCH_CONVERSION_S3_BUCKET: optionalText,
  BATCH_CONVERSION_ROLE_ARN: optionalText,
  BATCH_CONVERSION_MIN_PAGES: integer(600, 1),
  BATCH_CONVERSION_MIN_RECORDS: integer(100, 0),
  BATCH_CONVERSION_MAX_RECORDS: integer(50_000, 1),
  BATCH_CONVERSION_TIMEOUT_HOURS: integer(24, 0).transform((hours) => Math.min(168, Math.max(24, hours))),
  BATCH_CONVERSION_MAX_FILE_MB: integer(200, 1),
  BATCH_CONVERSION_POLL_SECONDS: integer(300, 1),

  // storage
  STORAGE_DRIVER: optionalText.pipe(z.enum(['fs', 's3']).optional()),
  S3_ENDPOINT: optionalUrl,
  S3_BUCKET: optionalText,
  S3_FORCE_PATH_STYLE: flag(false),

  // customer webhooks
  WEBHOOK_DNS_SERVERS: optionalText,
  WEBHOOK_TEST_ALLOW_LOOPBACK: flag(false),

  // convert-by-email intake
  INTAKE_DOMAIN: optionalText,
  INTAKE_SMTP_PORT: integer(2525, 0, 65535),
  INTAKE_MAX_BYTES: integer(25 * 1024 * 1024, 1),
  INTAKE_PUBLIC_ADDRESS: optionalText,
  MAIL_SERVICE_ACCOUNT_KEY: optionalText,
  MAIL_TOKEN_URL: optionalUrl,
  MAIL_API_BASE_URL: optionalUrl,
  MAIL_API_TIMEOUT_MS: integer(15_000, 1),
  INTAKE_SENDER_LIMIT: integer(20, 1),
  INTAKE_SENDER_WINDOW_SECONDS: integer(3600, 1, 86_400),
  FOLIO_INTAKE: flag(true),

  // input from storage: import by URL, customer S3 connections, watched prefixes
  IMPORT_TIMEOUT_SECONDS: integer(120, 1, 3600),
  STORAGE_STS_ENDPOINT: optionalUrl,
  STORAGE_TEST_ALLOW_LOOPBACK: flag(false),
  // pipeline benchmark
  BENCHMARK_MODE: optionalText.pipe(z.enum(['queue', 'inline']).optional()),
  BENCHMARK_VISIBILITY_TIMEOUT_SECONDS: integer(15 * 60, 1, 24 * 60 * 60),
  BENCHMARK_RETRY_LIMIT: integer(2, 0, 10),
  BENCHMARK_MAX_PAGES: integer(100, 1, 5000),
  BENCHMARK_CONCURRENCY: integer(1, 1, 16),
  QUEUE_SUPERVISE_SECONDS: integer(60, 1, 3600),
  // model budget, cost monitors, out-of-band alerts
  MODEL_BUDGET_DAILY_USD: optionalText.pipe(z.coerce.number<string | undefined>().positive().optional()),
  MODEL_BUDGET_MONTHLY_USD: optionalText.pipe(z.coerce.number<string | undefined>().positive().optional()),
  MODEL_BUDGET_ALERT_PERCENT: integer(80, 1, 99),
  COST_SPIKE_FACTOR: optionalText.pipe(z.coerce.number<string | undefined>().min(1).max(1000).optional()),
  COST_SPIKE_MIN_USD: optionalText.pipe(z.coerce.number<string | undefined>().nonnegative().optional()),
  COST_TRICKLE_HOURS: integer(6, 1, 168),
  FATAL_ALERT_MAX_PER_HOUR: integer(10, 0, 1000),
  FATAL_ALERT_DEDUPE_SECONDS: integer(3600, 1, 7 * 86_400),
});

/**
 * Switches that weaken a safety check exist for the test suite only: set under
 * any NODE_ENV but `test` they stop the start, so a production config that
 * carries one by accident never runs.
 */
const TEST_ONLY_SWITCHES = ['WEBHOOK_TEST_ALLOW_LOOPBACK', 'STORAGE_TEST_ALLOW_LOOPBACK'] as const;

type ParsedEnv = z.output<typeof EnvSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = EnvSchema.superRefine((e, ctx) => {
    for (const name of TEST_ONLY_SWITCHES) {
      if (e[name] && e.NODE_ENV !== 'test') ctx.addIssue({ code: 'custom', path: [name], message: 'a test-only switch; it is refused unless NODE_ENV=test' });
    }
  }).safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid environment:\n${lines.join('\n')}`);
  }
  return buildConfig(parsed.data);
}

function buildConfig(e: ParsedEnv) {
  const dataDir = path.resolve(e.FOLIO_DATA_DIR ?? '.folio');
  const primary = e.EMAIL_PRIMARY ?? 'provider_a';
  const fallback = e.EMAIL_FALLBACK && e.EMAIL_FALLBACK !== primary ? e.EMAIL_FALLBACK : undefined;
  return {
    env: e.NODE_ENV ?? 'development',
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL,
    dataDir,
    logLevel: e.LOG_LEVEL ?? 'info',
    runWorkers: e.FOLIO_WORKERS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    database: {
      url: e.DATABASE_URL ?? e.DB_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      embeddedDir: path.join(dataDir, 'pg'),
    },
    auth: {
      jwtSecret: e.AUTH_JWT_SECRET,
      jwksUrl: e.AUTH_JWKS_URL,
      issuer: e.AUTH_JWT_ISSUER,
      audience: e.AUTH_JWT_AUDIENCE,
      adminEmails: (e.ADMIN_EMAILS ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    },
    secrets: {
      proxyShared: e.PROXY_SHARED_SECRET,
      downloadToken: e.DOWNLOAD_TOKEN_SECRET,
      webhookKey: e.WEBHOOK_SECRET_KEY,
    },
    email: {
      primary,
      fallback,
      // The library logs and checks suppressions only when it has a database.
      // DB_URL + DB_SERVICE_KEY is the specification's pair; our DATABASE_URL counts too.
      loggingEnabled: Boolean(e.DATABASE_URL || (e.DB_URL && e.DB_SERVICE_KEY)),
      providerA: {
        apiKey: e.PROVIDER_A_API_KEY,
        baseUrl: e.PROVIDER_A_BASE_URL ?? 'https://api.resend.com',
        webhookSecret: e.PROVIDER_A_WEBHOOK_SECRET,
        costUsd: e.EMAIL_PROVIDER_A_COST_USD,
      },
      providerB: {
        endpoint: e.PROVIDER_B_ENDPOINT,
        region: e.CLOUD_REGION ?? 'us-east-1',
        accessKeyId: e.CLOUD_ACCESS_KEY_ID,
        secretAccessKey: e.CLOUD_SECRET_ACCESS_KEY,
        sessionToken: e.CLOUD_SESSION_TOKEN,
        configurationSet: e.EMAIL_CLOUD_CONFIGURATION_SET,
        outreachConfigurationSet: e.CLOUD_CONFIGURATION_SET ?? 'outreach',
        webhookSecret: e.CLOUD_WEBHOOK_SECRET,
        costUsd: e.EMAIL_PROVIDER_B_COST_USD,
      },
      deferQueue: e.EMAIL_DEFER_QUEUE ?? e.EMAIL_DEFER_QUEUE_URL,
      senderDomain: e.EMAIL_SENDER_DOMAIN,
      retiredDomain: e.EMAIL_RETIRED_DOMAIN,
      defaultFrom: e.EMAIL_DEFAULT_FROM ?? `Folio <no-reply@${e.EMAIL_SENDER_DOMAIN ?? 'folio.localhost'}>`,
    },
    product: {
      /** where contact-form and feedback mail goes (Reply-To is the sender) */
      contactEmail: e.CONTACT_EMAIL?.toLowerCase(),
      /** the link every "insufficient credits" message and email carries */
      purchaseUrl: e.PURCHASE_URL ?? `${(e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '')}/pricing`,
    },
    alerts: {
      alertEmail: e.ALERT_EMAIL,
      messenger: { baseUrl: e.MESSENGER_API_BASE_URL ?? 'https://api.telegram.org', botToken: e.MESSENGER_BOT_TOKEN, chatId: e.MESSENGER_CHAT_ID },
      internalAlertUrl: e.INTERNAL_ALERT_URL,
      internalSendEmailUrl: e.INTERNAL_SEND_EMAIL_URL,
    },
    conversion: {
      bedrock: {
        region: e.BEDROCK_REGION ?? e.CLOUD_REGION ?? 'us-east-1',
        endpoint: e.BEDROCK_ENDPOINT,
        controlEndpoint: e.BEDROCK_CONTROL_ENDPOINT,
        modelId: e.BEDROCK_MODEL_ID ?? 'anthropic.claude-3-5-sonnet-20241022-v2:0',
        maxTokens: e.BEDROCK_MAX_TOKENS,
        temperature: e.BEDROCK_TEMPERATURE ?? 0,
        accessKeyId: e.CLOUD_ACCESS_KEY_ID,
        secretAccessKey: e.CLOUD_SECRET_ACCESS_KEY,
        sessionToken: e.CLOUD_SESSION_TOKEN,
      },
      parser: { url: e.PARSER_API_URL, apiKey: e.PARSER_API_KEY },
      poolSize: e.CONVERSION_POOL_SIZE || os.availableParallelism(),
      uploadMaxBytes: e.UPLOAD_MAX_BYTES,
      uploadMaxPages: e.UPLOAD_MAX_PAGES,
      chunkPages: e.CHUNK_PAGES,
      chunkConcurrency: e.CHUNK_CONCURRENCY,
      heartbeatIntervalMs: e.CHUNK_HEARTBEAT_INTERVAL_MS,
      highFidelityCreditMultiplier: e.HIGH_FIDELITY_CREDIT_MULTIPLIER,
    },
    batch: {
      enabled: e.BATCH_CONVERSION_ENABLED && Boolean(e.BATCH_CONVERSION_S3_BUCKET && e.BATCH_CONVERSION_ROLE_ARN),
      bucket: e.BATCH_CONVERSION_S3_BUCKET,
      roleArn: e.BATCH_CONVERSION_ROLE_ARN,
      minPages: e.BATCH_CONVERSION_MIN_PAGES,
      minRecords: e.BATCH_CONVERSION_MIN_RECORDS,
      maxRecords: e.BATCH_CONVERSION_MAX_RECORDS,
      timeoutHours: e.BATCH_CONVERSION_TIMEOUT_HOURS,
      maxFileMb: e.BATCH_CONVERSION_MAX_FILE_MB,
      pollSeconds: e.BATCH_CONVERSION_POLL_SECONDS,
    },
    storage: {
      driver: e.STORAGE_DRIVER ?? 'fs',
      fsRoot: path.join(dataDir, 'objects'),
      s3: { endpoint: e.S3_ENDPOINT, bucket: e.S3_BUCKET, forcePathStyle: e.S3_FORCE_PATH_STYLE, region: e.CLOUD_REGION ?? 'us-east-1' },
    },
    webhooks: {
      /** "host:port" DNS servers for endpoint host names; unset: the system resolver. */
      dnsServers: (e.WEBHOOK_DNS_SERVERS ?? '')
        .split(',')
        .map((server) => server.trim())
        .filter(Boolean),
      /** Test suite only (refused above unless NODE_ENV=test): a loopback receiver with a self-signed certificate. */
      allowLoopbackReceiver: e.WEBHOOK_TEST_ALLOW_LOOPBACK && e.NODE_ENV === 'test',
    },
    intake: {
      enabled: e.FOLIO_INTAKE,
      domain: (e.INTAKE_DOMAIN ?? 'intake.folio.localhost').toLowerCase(),
      smtpPort: e.INTAKE_SMTP_PORT,
      /** The largest PDF we convert (the specification's 25 MB). */
      maxBytes: e.INTAKE_MAX_BYTES,
      // A whole message may be twice that: base64 makes a 25 MB file 34 MB, and a file somewhat over
      // the limit should still reach us and get the branded "too large" reply rather than a bounce.
      maxMessageBytes: e.INTAKE_MAX_BYTES * 2,
      publicAddress: (e.INTAKE_PUBLIC_ADDRESS ?? `convert@${e.EMAIL_SENDER_DOMAIN ?? 'folio.localhost'}`).toLowerCase(),
      senderLimit: e.INTAKE_SENDER_LIMIT,
      senderWindowMs: e.INTAKE_SENDER_WINDOW_SECONDS * 1000,
      mail: {
        serviceAccountKey: e.MAIL_SERVICE_ACCOUNT_KEY,
        tokenUrl: e.MAIL_TOKEN_URL,
        apiBaseUrl: e.MAIL_API_BASE_URL ?? 'https://gmail.googleapis.com',
        timeoutMs: e.MAIL_API_TIMEOUT_MS,
      },
    },
    imports: {
      /** A whole URL import or S3 object fetch (headers and body) must finish within this. */
      timeoutMs: e.IMPORT_TIMEOUT_SECONDS * 1000,
      /** Where AssumeRole is sent for role connections; unset: the regional AWS STS endpoint. */
      stsEndpoint: e.STORAGE_STS_ENDPOINT,
      /**
       * Test suite only (refused above unless NODE_ENV=test): URL imports from a loopback HTTPS origin
       * with a self-signed certificate, and S3 connections to a loopback (plain HTTP) endpoint.
       */
      allowLoopback: e.STORAGE_TEST_ALLOW_LOOPBACK && e.NODE_ENV === 'test',
    },
    benchmark: {
      /** queue: POST answers at once and workers run the pipelines (cloud); inline: POST runs them and answers with the result (edge) */
      mode: e.BENCHMARK_MODE ?? 'queue',
      /** how long a pipeline job may stay active before it is taken back and retried (the queue's visibility timeout) */
      visibilityTimeoutSeconds: e.BENCHMARK_VISIBILITY_TIMEOUT_SECONDS,
      retryLimit: e.BENCHMARK_RETRY_LIMIT,
      maxPages: e.BENCHMARK_MAX_PAGES,
      /** pipelines one worker process runs at once (one per spot instance by default) */
      concurrency: e.BENCHMARK_CONCURRENCY,
    },
    /** how often a worker process looks for expired jobs (pg-boss supervise and monitor intervals) */
    queueSuperviseSeconds: e.QUEUE_SUPERVISE_SECONDS,
    budget: {
      /** USD per UTC day and per UTC month; unset means no limit (the admin settings override both). */
      dailyUsd: e.MODEL_BUDGET_DAILY_USD,
      monthlyUsd: e.MODEL_BUDGET_MONTHLY_USD,
      alertRatio: e.MODEL_BUDGET_ALERT_PERCENT / 100,
      spikeFactor: e.COST_SPIKE_FACTOR ?? 3,
      /** a last hour below this is never a spike, however quiet the week was */
      spikeMinUsd: e.COST_SPIKE_MIN_USD ?? 1,
      trickleHours: e.COST_TRICKLE_HOURS,
      fatalAlertsPerHour: e.FATAL_ALERT_MAX_PER_HOUR,
      fatalDedupeMs: e.FATAL_ALERT_DEDUPE_SECONDS * 1000,
    },
  };
}

export type Config = ReturnType<typeof buildConfig>;
