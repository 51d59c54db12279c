import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

export function insertContactMessage(db: Database, row: { email: string; name: string; message: string; remoteAddress?: string }): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into contact_messages (email, name, message, remote_address)
    values (${row.email}, ${row.name}, ${row.message}, ${row.remoteAddress ?? null}) returning id`);
}

export async function recordContactSend(db: Database, id: string, status: string): Promise<void> {
  await db.query(sql.type(AnyRow)`update contact_messages set send_status = ${status} where id = ${id}`);
}

export function insertFeedback(
  db: Database,
  row: { fileId: string; jobId: string | null; userId: string; rating: number; comment?: string; wcagStatus?: string },
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into conversion_feedback (file_id, job_id, user_id, rating, comment, wcag_status)
    values (${row.fileId}, ${row.jobId}, ${row.userId}, ${row.rating}, ${row.comment ?? null}, ${row.wcagStatus ?? null}) returning id`);
}

export async function recordFeedbackSend(db: Database, id: string, status: string): Promise<void> {
  await db.query(sql.type(AnyRow)`update conversion_feedback set send_status = ${status} where id = ${id}`);
}
