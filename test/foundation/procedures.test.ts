import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { createCallerFactory, fileOwnerProcedure, proxyProcedure, router, tenantAdminProcedure, adminProcedure } from '../../server/trpc/trpc.ts';
import { startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

const app = await startTestApp({ env: { ADMIN_EMAILS: 'boss@example.com' } });

// A router made of the real procedure builders, called in-process with real requests' headers.
const probe = router({
  file: fileOwnerProcedure.query(({ input }) => input.fileId),
  internal: proxyProcedure.query(() => 'ok'),
  tenant: tenantAdminProcedure.query(({ ctx }) => ctx.tenantId),
  admin: adminProcedure.query(() => 'ok'),
});
const createCaller = createCallerFactory(probe);

function callerWith(headers: Record<string, string>) {
  const req = { headers } as unknown as Request;
  return createCaller({ deps: app.deps, req, res: {} as Response, requestId: 'test', log: app.deps.log });
}

async function as(email: string) {
  return callerWith({ authorization: `Bearer ${await app.token(email)}` });
}

async function userId(email: string) {
  await (await as(email)).admin().catch(() => {});
  return app.database.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`select id from users where email = ${email}`);
}

async function createFile(ownerEmail: string) {
  const ownerId = await userId(ownerEmail);
  return app.database.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into files (owner_id, original_name, content_type) values (${ownerId}, 'a.pdf', 'application/pdf') returning id`);
}

function codeOf(error: unknown) {
  return (error as { cause?: { code?: string } }).cause?.code;
}

describe('file owner procedure', () => {
  it("lets the owner in and answers another user's file exactly like a missing one", async () => {
    const fileId = await createFile('owner@example.com');
    expect(await (await as('owner@example.com')).file({ fileId })).toBe(fileId);
    const stranger = await (await as('stranger@example.com')).file({ fileId }).catch((error) => error);
    const missing = await (await as('stranger@example.com')).file({ fileId: crypto.randomUUID() }).catch((error) => error);
    expect(codeOf(stranger)).toBe('NOT_FOUND');
    expect(codeOf(missing)).toBe('NOT_FOUND');
    expect(stranger.message).toBe(missing.message);
  });

  it('lets an admin of the owner’s tenant in, and nobody from another tenant', async () => {
    const db = app.database.db;
    const [tenantA, tenantB] = await Promise.all(
      ['A', 'B'].map((name) => db.oneFirst(sql.type(z.object({ id: z.uuid() }))`insert into tenants (name) values (${name}) returning id`)),
    );
    const member = await userId('member@example.com');
    const adminA = await userId('admin-a@example.com');
    const adminB = await userId('admin-b@example.com');
    await db.query(sql.type(z.object({}))`update users set tenant_id = ${tenantA!} where id in (${member}, ${adminA})`);
    await db.query(sql.type(z.object({}))`update users set tenant_id = ${tenantB!} where id = ${adminB}`);
    await db.query(sql.type(z.object({}))`update users set is_tenant_admin = true where id in (${adminA}, ${adminB})`);
    const fileId = await createFile('member@example.com');
    expect(await (await as('admin-a@example.com')).file({ fileId })).toBe(fileId);
    expect(await (await as('admin-a@example.com')).tenant()).toBe(tenantA);
    expect(codeOf(await (await as('admin-b@example.com')).file({ fileId }).catch((error) => error))).toBe('NOT_FOUND');
    expect(codeOf(await (await as('member@example.com')).tenant().catch((error) => error))).toBe('FORBIDDEN');
  });
});

describe('admin procedure', () => {
  it('admits ADMIN_EMAILS and refuses others', async () => {
    expect(await (await as('boss@example.com')).admin()).toBe('ok');
    expect(codeOf(await (await as('worker@example.com')).admin().catch((error) => error))).toBe('FORBIDDEN');
  });
});

describe('proxy-secret procedure', () => {
  it('admits the shared secret and answers 403 to a missing or wrong one', async () => {
    expect(await callerWith({ 'x-proxy-secret': TEST_PROXY_SECRET }).internal()).toBe('ok');
    expect(
      codeOf(
        await callerWith({})
          .internal()
          .catch((error) => error),
      ),
    ).toBe('FORBIDDEN');
    expect(
      codeOf(
        await callerWith({ 'x-proxy-secret': `${TEST_PROXY_SECRET}x` })
          .internal()
          .catch((error) => error),
      ),
    ).toBe('FORBIDDEN');
  });
});

describe('raw routes and procedures share the guards', () => {
  it('refuses a missing proxy secret on a raw route and on a procedure with the same 403 body', async () => {
    const post = (path: string) => fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const raw = await post('/internal/audit-digest?cadence=daily');
    const procedure = await post('/internal/send-email');
    expect([raw.status, procedure.status]).toEqual([403, 403]);
    expect(await raw.json()).toEqual({ code: 'FORBIDDEN', message: 'Invalid proxy secret' });
    expect(await procedure.json()).toEqual({ code: 'FORBIDDEN', message: 'Invalid proxy secret' });
  });

  it("answers a stranger's file, a missing file and a malformed id with the same 404 on the stream and on a procedure", async () => {
    const fileId = await createFile('raw-owner@example.com');
    const auth = { authorization: `Bearer ${await app.token('raw-stranger@example.com')}` };
    const answers = await Promise.all([
      fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: auth }),
      fetch(`${app.baseUrl}/api/convert/${crypto.randomUUID()}/stream`, { headers: auth }),
      fetch(`${app.baseUrl}/api/convert/not-a-uuid/stream`, { headers: auth }),
      fetch(`${app.baseUrl}/api/v1/files/${fileId}/cancel`, { method: 'POST', headers: auth }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404, 404]);
    for (const answer of answers) expect(await answer.json()).toEqual({ code: 'NOT_FOUND', message: 'File not found' });
  });
});
