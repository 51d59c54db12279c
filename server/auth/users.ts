import { z } from 'zod';
import { DomainError } from '../errors.ts';
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
 * Finds the user a verified token names: by subject, else by email, else
 * creates the user with a free customer account. Runs in one transaction so
 * two first requests from a new user create one row.
 *
 * An email finds an existing user only to link it: when the token says the
 * email is verified (`email_verified`) and that user has no subject yet (made
 * by convert-by-email or an invite). Anything else is ACCOUNT_LINK_REFUSED: a
 * token from another identity that merely carries the same email must not
 * open someone's account.
 */
export async function findOrCreateUser(
  db: Database,
  claims: { subject: string; email?: string; emailVerified?: boolean; name?: string },
): Promise<AuthUser | null> {
  const bySubject = await db.maybeOne(sql.type(AuthUser)`select ${userColumns} from users where auth_subject = ${claims.subject}`);
  if (bySubject) return bySubject;
  if (!claims.email) return null;
  const email = claims.email.trim().toLowerCase();
  return db.transaction(async (tx) => {
    const customerId = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into customers (email, name) values (${email}, ${claims.name ?? null})
      on conflict (email) do update set email = excluded.email
      returning id`);
    // the update arm links only a user without a subject, and only for a verified email (or is the same subject's
    // racing first request); otherwise no row comes back
    const user = await tx.maybeOne(sql.type(AuthUser)`
      insert into users (email, auth_subject, name, customer_id) values (${email}, ${claims.subject}, ${claims.name ?? null}, ${customerId})
      on conflict (email) do update set auth_subject = excluded.auth_subject
       where (users.auth_subject is null and ${claims.emailVerified === true}) or users.auth_subject = excluded.auth_subject
      returning ${userColumns}`);
    if (user) return user;
    throw new DomainError(
      'ACCOUNT_LINK_REFUSED',
      claims.emailVerified
        ? 'An account with this email already signs in with another identity; sign in with that one'
        : 'An account with this email exists; sign in with a provider that verifies the email to link it',
    );
  });
}
