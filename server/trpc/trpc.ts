import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z, ZodError } from 'zod';
import { DomainError, isDomainError } from '../errors.ts';
import { authenticateUser, requireFileAccess, requireProxySecret } from '../http/guards.ts';
import type { AppContext } from './context.ts';

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/** The domain code and status a tRPC error stands for, the same table REST uses. */
export function describeTrpcError(error: TRPCError): { status: number; code: string; message: string; issues?: unknown } {
  const cause = error.cause;
  if (isDomainError(cause)) return { status: cause.status, code: cause.code, message: cause.message };
  if (cause instanceof ZodError || (error.code === 'BAD_REQUEST' && cause?.name === '$ZodError')) {
    return { status: 400, code: 'VALIDATION_FAILED', message: 'Input validation failed', issues: (cause as ZodError).issues };
  }
  switch (error.code) {
    case 'INTERNAL_SERVER_ERROR':
      return { status: 500, code: 'INTERNAL', message: 'Internal error' };
    case 'PARSE_ERROR':
      return { status: 400, code: 'BAD_REQUEST', message: 'Malformed request body' };
    case 'NOT_FOUND':
      return { status: 404, code: 'NOT_FOUND', message: error.message || 'Not found' };
    default: {
      const status = Object.entries(TRPC_CODE_BY_STATUS).find(([, code]) => code === error.code)?.[0];
      return { status: status ? Number(status) : 500, code: error.code, message: error.message };
    }
  }
}

const t = initTRPC
  .context<AppContext>()
  .meta<OpenApiMeta>()
  .create({
    errorFormatter: ({ shape, error }) => {
      const described = describeTrpcError(error);
      return {
        ...shape,
        message: described.message,
        data: { code: described.code, httpStatus: described.status, issues: described.issues },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Turns a thrown DomainError into the TRPCError whose status matches our table. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && isDomainError(result.error.cause)) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODE_BY_STATUS[cause.status] ?? 'INTERNAL_SERVER_ERROR', message: cause.message, cause });
  }
  return result;
});

export const publicProcedure = t.procedure.use(domainErrors);

/** Signed-in user: a valid Bearer JWT whose subject or email maps to a user. */
export const userProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const user = await authenticateUser(ctx.deps, ctx.req.headers);
  return next({ ctx: { ...ctx, user } });
});

export const adminProcedure = userProcedure.use(({ ctx, next }) => {
  if (!ctx.user.isAdmin) throw new DomainError('FORBIDDEN', 'Admins only');
  return next();
});

export const tenantAdminProcedure = userProcedure.use(({ ctx, next }) => {
  if (!ctx.user.isTenantAdmin || !ctx.user.tenantId) throw new DomainError('FORBIDDEN', 'Tenant admins only');
  return next({ ctx: { ...ctx, tenantId: ctx.user.tenantId } });
});

/** The file's owner (or an admin, or an admin of the owner's tenant); anyone else gets 404. */
export const fileOwnerProcedure = userProcedure.input(z.object({ fileId: z.uuid() })).use(async ({ ctx, input, next }) => {
  await requireFileAccess(ctx.deps, ctx.user, input.fileId);
  return next();
});

/** Internal callers (relay routes, cron): `x-proxy-secret`. */
export const proxyProcedure = publicProcedure.use(({ ctx, next }) => {
  requireProxySecret(ctx.deps, ctx.req.headers);
  return next();
});
