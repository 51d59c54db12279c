import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

type Queryable = Pick<Database, 'query' | 'one' | 'oneFirst' | 'maybeOne' | 'maybeOneFirst' | 'any'>;

export const IntakeStatus = z.enum(['received', 'converting', 'finishing', 'replied', 'refused', 'failed', 'dropped']);
export type IntakeStatus = z.infer<typeof IntakeStatus>;

export const IntakeMessageRow = z.object({
  id: z.uuid(),
  source: z.enum(['smtp', 'http']),
  rawKey: z.string().nullable(),
  sizeBytes: z.coerce.number(),
  envelopeFrom: z.string().nullable(),
  senderEmail: z.string().nullable(),
  subject: z.string().nullable(),
  threadMessageId: z.string().nullable(),
  threadReferences: z.array(z.string()),
  filename: z.string().nullable(),
  fileSizeBytes: z.number().nullable(),
  customerId: z.uuid().nullable(),
  fileId: z.uuid().nullable(),
  status: IntakeStatus,
  outcome: z.string().nullable(),
  ackSentAt: z.date().nullable(),
  replySentAt: z.date().nullable(),
  replyError: z.string().nullable(),
  conversionLogId: z.uuid().nullable(),
});
export type IntakeMessageRow = z.infer<typeof IntakeMessageRow>;

const columns = sql.fragment`
  id, source, raw_key as "rawKey", size_bytes as "sizeBytes", envelope_from as "envelopeFrom", sender_email as "senderEmail", subject,
  thread_message_id as "threadMessageId", thread_references as "threadReferences", filename, file_size_bytes as "fileSizeBytes",
  customer_id as "customerId", file_id as "fileId", status, outcome, ack_sent_at as "ackSentAt", reply_sent_at as "replySentAt",
  reply_error as "replyError", conversion_log_id as "conversionLogId"`;

export type NewIntakeMessage = {
  id: string;
  source: 'smtp' | 'http';
  dedupeKey: string;
  rawKey: string;
  sizeBytes: number;
  envelopeFrom: string | null;
  envelopeTo: string[];
  remoteAddress: string | null;
};

/** Inserts the message unless one with its dedupe key exists; true when this call inserted it. */
export async function insertIntakeMessage(db: Queryable, row: NewIntakeMessage): Promise<boolean> {
  const inserted = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into intake_messages (id, source, dedupe_key, raw_key, size_bytes, envelope_from, envelope_to, remote_address)
    values (${row.id}, ${row.source}, ${row.dedupeKey}, ${row.rawKey}, ${row.sizeBytes}, ${row.envelopeFrom},
            ${sql.array(row.envelopeTo, 'text')}, ${row.remoteAddress})
    on conflict on constraint intake_messages_dedupe_key do nothing
    returning id`);
  return inserted !== null;
}

export function loadIntakeMessage(db: Queryable, id: string): Promise<IntakeMessageRow | null> {
  return db.maybeOne(sql.type(IntakeMessageRow)`select ${columns} from intake_messages where id = ${id}`);
}

/** What the handler read from the message, kept for the reply that comes when the conversion ends. */
export async function recordMessageFacts(
  db: Queryable,
  id: string,
  facts: { senderEmail?: string; subject: string; threadMessageId?: string; threadReferences: string[] },
): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update intake_messages set sender_email = ${facts.senderEmail ?? null}, subject = ${facts.subject.slice(0, 998)},
           thread_message_id = ${facts.threadMessageId ?? null}, thread_references = ${sql.array(facts.threadReferences, 'text')}, updated_at = now()
     where id = ${id}`);
}

export async function recordCustomerAndFile(db: Queryable, id: string, facts: { customerId: string; filename?: string; fileSizeBytes?: number }) {
  await db.query(sql.type(AnyRow)`
    update intake_messages set customer_id = ${facts.customerId}, filename = ${facts.filename ?? null}, file_size_bytes = ${facts.fileSizeBytes ?? null},
           updated_at = now()
     where id = ${id}`);
}

/** Moves the message from `from` to `to`; false when another run moved it first. */
export async function moveIntakeMessage(
  db: Queryable,
  id: string,
  from: IntakeStatus[],
  to: IntakeStatus,
  fields: { outcome?: string; fileId?: string; conversionLogId?: string } = {},
): Promise<boolean> {
  const moved = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    update intake_messages
       set status = ${to}, outcome = coalesce(${fields.outcome ?? null}, outcome), file_id = coalesce(${fields.fileId ?? null}::uuid, file_id),
           conversion_log_id = coalesce(${fields.conversionLogId ?? null}::uuid, conversion_log_id), updated_at = now()
     where id = ${id} and status = any(${sql.array(from, 'text')})
    returning id`);
  return moved !== null;
}

export async function markAcknowledged(db: Queryable, id: string): Promise<void> {
  await db.query(sql.type(AnyRow)`update intake_messages set ack_sent_at = now(), updated_at = now() where id = ${id}`);
}

/** The final reply went out (error null) or could not (its error, kept for the operator). */
export async function markReplied(db: Queryable, id: string, error: string | null): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update intake_messages set reply_sent_at = case when ${error}::text is null then now() else reply_sent_at end,
           reply_error = ${error}, updated_at = now()
     where id = ${id}`);
}

export async function markCleaned(db: Queryable, id: string): Promise<void> {
  await db.query(sql.type(AnyRow)`update intake_messages set raw_key = null, cleaned_at = now(), updated_at = now() where id = ${id}`);
}

const Customer = z.object({ id: z.uuid(), email: z.string(), planType: z.enum(['free', 'paid']) });
export type IntakeCustomer = z.infer<typeof Customer>;

/** The registered customer behind a sender address, compared case-insensitively. */
export function findCustomerByEmail(db: Queryable, email: string): Promise<IntakeCustomer | null> {
  return db.maybeOne(sql.type(Customer)`
    select id, email, plan_type as "planType" from customers where lower(email) = lower(${email.trim()}) limit 1`);
}

const Owner = z.object({ id: z.uuid(), tenantId: z.uuid().nullable() });

/**
 * The user who owns the customer's mailed files (so they show in the web app
 * like uploads): the customer's user with the same address, else any of its
 * users, else a new one with the customer's address, which a later sign-in
 * with that address adopts.
 */
export async function findOrCreateOwner(db: Queryable, customer: IntakeCustomer): Promise<z.infer<typeof Owner>> {
  const existing = await db.maybeOne(sql.type(Owner)`
    select id, tenant_id as "tenantId" from users where customer_id = ${customer.id} order by (email = ${customer.email}) desc, created_at limit 1`);
  if (existing) return existing;
  return db.one(sql.type(Owner)`
    insert into users (email, customer_id) values (${customer.email}, ${customer.id})
    on conflict (email) do update set email = excluded.email
    returning id, tenant_id as "tenantId"`);
}

export async function insertMailedFile(
  db: Queryable,
  row: { id: string; ownerId: string; tenantId: string | null; name: string; size: number; pages: number; key: string },
): Promise<void> {
  await db.query(sql.type(AnyRow)`
    insert into files (id, owner_id, tenant_id, original_name, content_type, size_bytes, page_count, storage_key, status)
    values (${row.id}, ${row.ownerId}, ${row.tenantId}, ${row.name}, 'application/pdf', ${row.size}, ${row.pages}, ${row.key}, 'uploaded')
    on conflict (id) do nothing`);
}

export async function filePageCount(db: Queryable, fileId: string): Promise<number | undefined> {
  const pages = await db.maybeOneFirst(sql.type(z.object({ pages: z.number().nullable() }))`select page_count as pages from files where id = ${fileId}`);
  return pages ?? undefined;
}

/** A conversion job in one of these has ended: nothing about it moves any more. */
export const ENDED_JOB_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export const EndedJob = z.object({
  id: z.uuid(),
  fileId: z.uuid(),
  status: z.string(),
  totalPages: z.number(),
  creditsCharged: z.number().nullable(),
  resultKey: z.string().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
});
export type EndedJob = z.infer<typeof EndedJob>;

/** The file's latest conversion job, whatever its state; null when none was ever started. */
export function latestConversionJob(db: Queryable, fileId: string): Promise<EndedJob | null> {
  return db.maybeOne(sql.type(EndedJob)`
    select id, file_id as "fileId", status, total_pages as "totalPages", credits_charged as "creditsCharged", result_key as "resultKey",
           error_code as "errorCode", error_message as "errorMessage"
      from large_conversion_jobs where file_id = ${fileId} order by created_at desc limit 1`);
}

export type ConversionLogEntry = {
  customerId: string | null;
  senderEmail: string;
  filename: string | null;
  fileSizeBytes: number | null;
  totalPages: number | null;
  standardPages: number | null;
  complexPages: number | null;
  creditsCharged: number;
  status: 'success' | 'error';
  errorMessage: string | null;
};

/** One `conversion_jobs` row (the specification's convert-by-email job log). */
export function insertConversionLog(db: Queryable, entry: ConversionLogEntry): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into conversion_jobs (customer_id, sender_email, filename, file_type, file_size_bytes, total_pages, standard_pages, complex_pages,
                                 credits_charged, status, error_message)
    values (${entry.customerId}, ${entry.senderEmail}, ${entry.filename}, 'pdf', ${entry.fileSizeBytes}, ${entry.totalPages}, ${entry.standardPages},
            ${entry.complexPages}, ${entry.creditsCharged}, ${entry.status}, ${entry.errorMessage})
    returning id`);
}

/** The job-log row of an attempt that converted nothing (a refusal, a failure): no pages, no charge. */
export function insertConversionError(
  db: Queryable,
  entry: Pick<ConversionLogEntry, 'customerId' | 'senderEmail' | 'filename' | 'fileSizeBytes'> & { errorMessage: string },
): Promise<string> {
  return insertConversionLog(db, { ...entry, totalPages: null, standardPages: null, complexPages: null, creditsCharged: 0, status: 'error' });
}

/** Messages whose conversion has ended (or vanished) while they still wait: the sweep finishes them. */
export function endedConversions(db: Queryable): Promise<readonly string[]> {
  return db
    .any(sql.type(z.object({ id: z.uuid() }))`
    select m.id from intake_messages m
     where m.status = 'converting'
       and not exists (select 1 from large_conversion_jobs j
                        where j.file_id = m.file_id and j.status not in ('completed', 'failed', 'cancelled'))
     limit 500`)
    .then((rows) => rows.map((row) => row.id));
}

/** A mailed file whose conversion never started (refused before it): nothing of it is worth keeping. */
export async function deleteUnconvertedFile(db: Queryable, fileId: string): Promise<void> {
  await db.query(sql.type(AnyRow)`
    delete from files f where f.id = ${fileId} and not exists (select 1 from large_conversion_jobs j where j.file_id = f.id)`);
}

/** The source of a converted file is gone from the store; the file keeps its row, its job and its result zip. */
export async function forgetFileSource(db: Queryable, fileId: string): Promise<void> {
  await db.query(sql.type(AnyRow)`update files set storage_key = null, updated_at = now() where id = ${fileId}`);
}
