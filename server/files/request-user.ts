import type { Request } from 'express';
import { findOrCreateUser, type AuthUser } from '../auth/users.ts';
import { DomainError } from '../errors.ts';
import type { AppDeps } from '../trpc/context.ts';

/** The Bearer user of a raw express route, the same rules as userProcedure. */
export async function requestUser(deps: AppDeps, req: Request): Promise<AuthUser & { isAdmin: boolean }> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!match) throw new DomainError('UNAUTHORIZED', 'Missing Bearer token');
  const claims = await deps.verifyToken(match[1]!);
  const user = await findOrCreateUser(deps.db, claims);
  if (!user) throw new DomainError('UNAUTHORIZED', 'Token does not name a user');
  return { ...user, isAdmin: user.isAdmin || deps.config.auth.adminEmails.includes(user.email) };
}

/** Owner, admin, or an admin of the owner's tenant; anyone else sees 404. */
export function canSeeFile(user: AuthUser & { isAdmin: boolean }, file: { ownerId: string; tenantId: string | null }): boolean {
  return file.ownerId === user.id || user.isAdmin || (user.isTenantAdmin && file.tenantId !== null && file.tenantId === user.tenantId);
}
