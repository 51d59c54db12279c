import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startTestApp, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
}, 60_000);

/** A token as an identity provider would issue it: its own subject, an email, and whether it verified that email. */
function token(subject: string, email: string, emailVerified?: boolean) {
  return new SignJWT({ email, ...(emailVerified === undefined ? {} : { email_verified: emailVerified }) })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

async function me(bearer: string) {
  const response = await fetch(`${app.baseUrl}/api/me`, { headers: { authorization: `Bearer ${bearer}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const subjectOf = (email: string) =>
  app.deps.db.maybeOneFirst(sql.type(z.object({ s: z.string().nullable() }))`select auth_subject as s from users where email = ${email}`);

describe('accounts are linked by email only when that is safe', () => {
  it('a token with another subject and the same (verified) email does not get the existing account', async () => {
    expect((await me(await token('idp|alice', 'alice@example.com', true))).status).toBe(200);
    const other = await me(await token('idp|mallory', 'alice@example.com', true));
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'ACCOUNT_LINK_REFUSED' });
    expect(await subjectOf('alice@example.com')).toBe('idp|alice');
    // the owner still signs in
    expect((await me(await token('idp|alice', 'alice@example.com', true))).status).toBe(200);
  });

  it('an account without a subject yet (convert-by-email) is linked by a verified email, and refused to an unverified one', async () => {
    for (const email of ['mailer@example.com', 'unverified@example.com']) {
      const customer = await app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`insert into customers (email) values (${email}) returning id`);
      await app.deps.db.query(sql.type(AnyRow)`insert into users (email, customer_id) values (${email}, ${customer})`);
    }
    const unverified = await me(await token('idp|someone', 'unverified@example.com'));
    expect(unverified.status).toBe(403);
    expect(unverified.body).toMatchObject({ code: 'ACCOUNT_LINK_REFUSED' });
    expect(await subjectOf('unverified@example.com')).toBeNull();
    expect((await me(await token('idp|mailer', 'mailer@example.com', true))).status).toBe(200);
    expect(await subjectOf('mailer@example.com')).toBe('idp|mailer');
  });

  it('a new user still gets an account on first sign-in, once, however many first requests race', async () => {
    const bearer = await token('idp|new', 'new@example.com');
    const statuses = await Promise.all(Array.from({ length: 5 }, async () => (await me(bearer)).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(await subjectOf('new@example.com')).toBe('idp|new');
  });
});
