import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import PostalMime, { type Email } from 'postal-mime';
import { afterAll } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { registerIntakeJobs } from '../../jobs/intake/intake.worker.ts';
import type { EngineProvider } from '../../server/conversion-jobs/engine-provider.ts';
import type { CoreDeps } from '../../server/deps.ts';
import { sql } from '../../server/db/database.ts';
import type { IntakeDeps } from '../../server/intake/intake-deps.ts';
import { loadIntakeMessage, type IntakeMessageRow } from '../../server/intake/intake.queries.ts';
import { startSmtpListener, type SmtpListener } from '../../server/intake/smtp-listener.ts';
import { startMailApiFake, type MailApiFake } from '../fakes/mail-api.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
export const corpusPdf = (name: string) => fs.readFile(path.join(CORPUS, name));

const INTAKE_DOMAIN = 'in.folio.test';
export const INTAKE_ADDRESS = `convert@${INTAKE_DOMAIN}`;
export const PUBLIC_ADDRESS = 'convert@folio.test';

export type Intake = {
  app: TestApp;
  /** What the intake workers run with (to call a handler a second time). */
  workerDeps: IntakeDeps;
  mail: MailApiFake;
  smtp: SmtpListener;
  /** Sends one message over real SMTP; resolves with the intake message id the listener's 250 names. */
  send: (message: Mail.Options, envelope?: { from: string; to: string[] }) => Promise<string>;
  /** The message's row once it reaches one of these statuses (bounded wait). */
  settled: (id: string, statuses?: string[], timeoutMs?: number) => Promise<IntakeMessageRow>;
  customer: (email: string, plan: { planType: 'free' | 'paid'; credits?: number; freeUsed?: number }) => Promise<string>;
};

/**
 * The whole intake on a test app: the mail-provider fake, the conversion and
 * intake workers on a real database, and the SMTP listener on a free port.
 */
export async function startIntake(options: { env?: Record<string, string>; engine?: (core: CoreDeps) => EngineProvider } = {}): Promise<Intake> {
  const mail = await startMailApiFake({ subject: PUBLIC_ADDRESS });
  const app = await startTestApp({
    workers: true,
    engine: options.engine,
    env: {
      CHUNK_PAGES: '2',
      CHUNK_CONCURRENCY: '2',
      CHUNK_HEARTBEAT_INTERVAL_MS: '100',
      CONVERSION_POOL_SIZE: '1',
      INTAKE_DOMAIN,
      INTAKE_PUBLIC_ADDRESS: PUBLIC_ADDRESS,
      EMAIL_SENDER_DOMAIN: 'folio.test',
      MAIL_SERVICE_ACCOUNT_KEY: mail.serviceAccountKey,
      MAIL_API_BASE_URL: mail.url,
      MAIL_API_TIMEOUT_MS: '2000',
      PUBLIC_BASE_URL: 'https://folio.test',
      ...options.env,
    },
  });
  await registerConversionJobs(app.deps, { schedule: false });
  const intake = await registerIntakeJobs(app.deps, { schedule: false });
  const smtp = await startSmtpListener(app.deps, { port: 0, host: '127.0.0.1' });
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, pool: false });
  afterAll(async () => {
    transport.close();
    intake.close();
    await smtp.close();
    await mail.close();
  });
  return {
    app,
    workerDeps: intake.deps,
    mail,
    smtp,
    async send(message, envelope) {
      const info = await transport.sendMail({ to: INTAKE_ADDRESS, ...message, ...(envelope ? { envelope } : {}) });
      const id = /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1];
      if (!id) throw new Error(`unexpected SMTP answer: ${info.response}`);
      return id;
    },
    settled: (id, statuses = ['replied', 'refused', 'failed', 'dropped'], timeoutMs = 30_000) =>
      until(
        () => loadIntakeMessage(app.deps.db, id),
        (row) => row !== null && statuses.includes(row.status),
        timeoutMs,
        `intake message ${id} in ${statuses.join('/')}`,
      ) as Promise<IntakeMessageRow>,
    async customer(email, plan) {
      return app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        insert into customers (email, plan_type, credits_remaining, lifetime_free_pages_used)
        values (${email.toLowerCase()}, ${plan.planType}, ${plan.credits ?? 0}, ${plan.freeUsed ?? 0}) returning id`);
    },
  };
}

export async function parseSent(raw: Buffer): Promise<Email> {
  return PostalMime.parse(raw);
}

/** The header block of a raw message as the wire carries it (folded lines kept). */
export function rawHeaders(raw: Buffer): string {
  const text = raw.toString('utf8');
  return text.slice(0, text.indexOf('\r\n\r\n'));
}

export function header(email: Email, name: string): string | undefined {
  return email.headers.find((item) => item.key === name)?.value;
}

const CustomerBalance = z.object({ credits: z.number(), held: z.number(), freeUsed: z.number(), freeHeld: z.number() });
export function customerBalance(app: TestApp, customerId: string) {
  return app.deps.db.one(sql.type(CustomerBalance)`
    select credits_remaining as credits, credits_held as held, lifetime_free_pages_used as "freeUsed", free_pages_held as "freeHeld"
      from customers where id = ${customerId}`);
}

const ConversionLog = z.object({
  status: z.string(),
  senderEmail: z.string(),
  filename: z.string().nullable(),
  fileType: z.string().nullable(),
  totalPages: z.number().nullable(),
  standardPages: z.number().nullable(),
  complexPages: z.number().nullable(),
  creditsCharged: z.number(),
  errorMessage: z.string().nullable(),
  customerId: z.uuid().nullable(),
});
export function conversionLog(app: TestApp, id: string) {
  return app.deps.db.one(sql.type(ConversionLog)`
    select c.status, c.sender_email as "senderEmail", c.filename, c.file_type as "fileType", c.total_pages as "totalPages",
           c.standard_pages as "standardPages", c.complex_pages as "complexPages", c.credits_charged as "creditsCharged",
           c.error_message as "errorMessage", c.customer_id as "customerId"
      from conversion_jobs c join intake_messages m on m.conversion_log_id = c.id where m.id = ${id}`);
}

const SendLogRow = z.object({ source: z.string().nullable(), status: z.string(), provider: z.string().nullable(), errorKind: z.string().nullable() });
export function sendLog(app: TestApp, intakeMessageId: string) {
  return app.deps.db.any(sql.type(SendLogRow)`
    select source, status, provider, error_kind as "errorKind" from email_log where tags->>'intake_message_id' = ${intakeMessageId} order by created_at`);
}
