import { AnyRow, type Queryable, sql } from './database.ts';

/** One row of the admin audit log, written in the caller's transaction with the change it records. */
export async function insertAdminAudit(db: Queryable, entry: { actorId: string; action: string; subject: string; details: Record<string, unknown> }) {
  await db.query(sql.type(AnyRow)`
    insert into admin_audit_log (actor_id, action, subject, details) values (${entry.actorId}, ${entry.action}, ${entry.subject}, ${JSON.stringify(entry.details)}::jsonb)`);
}
