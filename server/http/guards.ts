import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { TokenVerifier } from '../auth/tokens.ts';
import { type AuthUser, findOrCreateUser } from '../auth/users.ts';
import type { Deps } from '../deps.ts';
import { DomainError } from '../errors.ts';
import { selectFileOwner } from '../files/files.queries.ts';
import { secretsEqual } from '../secrets.ts';

/**
 * Who may call what, for tRPC middlewares and raw express routes alike. Each
 * guard throws a DomainError, so every door refuses with the same code and
 * body (server/errors.ts); none says more than its code needs to.
 */

export type RequestUser = AuthUser & { isAdmin: boolean };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** Internal callers (relay routes, cron): `x-proxy-secret` equal to PROXY_SHARED_SECRET, in constant time; unset refuses everyone. */
export function requireProxySecret(deps: Pick<Deps, 'config'>, headers: IncomingHttpHeaders): void {
  if (!secretsEqual(header(headers, 'x-proxy-secret'), deps.config.secrets.proxyShared)) throw new DomainError('FORBIDDEN', 'Invalid proxy secret');
}

/** The provider-B event bus: `X-Webhook-Secret` equal to CLOUD_WEBHOOK_SECRET, in constant time; unset refuses everyone. */
export function requireEventBusSecret(deps: Pick<Deps, 'config'>, headers: IncomingHttpHeaders): void {
  if (!secretsEqual(header(headers, 'x-webhook-secret'), deps.config.email.providerB.webhookSecret)) {
    throw new DomainError('UNAUTHORIZED', 'Invalid webhook secret');
  }
}

/** The token of an `Authorization: Bearer <token>` header. */
function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header(headers, 'authorization') ?? '')?.[1];
}

/** Signed-in user: a valid Bearer JWT whose subject or email maps to a user (created on first use); admins by flag or ADMIN_EMAILS. */
export async function authenticateUser(deps: Pick<Deps, 'config' | 'db'> & { verifyToken: TokenVerifier }, headers: IncomingHttpHeaders): Promise<RequestUser> {
  const token = bearerToken(headers);
  if (!token) throw new DomainError('UNAUTHORIZED', 'Missing Bearer token');
  const user = await findOrCreateUser(deps.db, await deps.verifyToken(token));
  if (!user) throw new DomainError('UNAUTHORIZED', 'Token does not name a user');
  return { ...user, isAdmin: user.isAdmin || deps.config.auth.adminEmails.includes(user.email) };
}

/**
 * The file's owner, an admin, or an admin of the owner's tenant may act on
 * it. Anyone else — and a malformed id — gets the same 404 as a file that
 * does not exist, so ids leak nothing. Returns the checked id.
 */
export async function requireFileAccess(deps: Pick<Deps, 'db'>, user: RequestUser, fileId: unknown): Promise<string> {
  const id = z.uuid().safeParse(fileId);
  const file = id.success ? await selectFileOwner(deps.db, id.data) : null;
  const allowed =
    file !== null && (file.ownerId === user.id || user.isAdmin || (user.isTenantAdmin && file.tenantId !== null && file.tenantId === user.tenantId));
  if (!id.success || !allowed) throw new DomainError('NOT_FOUND', 'File not found');
  return id.data;
}
