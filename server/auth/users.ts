import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';

export const AuthUser = z.object({
  id: z.uuid(),
  email: z.string(),
  customerId: z.uuid(),
  tenantId: z.uuid().nullable(),
  isTenantAdmin: z.boolean(),
  isAdmin: z.boolean(),
});
export type AuthUser = z.infer<typeof AuthUser>;

const userColumns = sql.fragment`id, email, customer_id as "customerId", tenant_id as "tenantId", is_tenant_admin as "isTenantAdmin", is_admin as "isAdmin"`;

/**
 * Finds the user a verified token names: by subject, else by email (linking
 * the subject), else creates the user with a free customer account. Runs in
 * one transaction so two first requests from a new user create one row.
 */
export async function findOrCreateUser(db: Database, claims: { subject: string; email?: string; name?: string }): Promise<AuthUser | null> {
  const bySubject = await db.maybeOne(sql.type(AuthUser)`select ${userColumns} from users where auth_subject = ${claims.subject}`);
  if (bySubject) return bySubject;
  if (!claims.email) return null;
  const email = claims.email.trim().toLowerCase();
  return db.transaction(async (tx) => {
    const customerId = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into customers (email, name) values (${email}, ${claims.name ?? null})
      on conflict (email) do update set email = excluded.email
      returning id`);
    return tx.one(sql.type(AuthUser)`
      insert into users (email, auth_subject, name, customer_id) values (${email}, ${claims.subject}, ${claims.name ?? null}, ${customerId})
      on conflict (email) do update set auth_subject = coalesce(users.auth_subject, excluded.auth_subject)
      returning ${userColumns}`);
  });
}
