import { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import { sql } from '../db/database.ts';
import { DomainError } from '../errors.ts';
import { requireManageableEndpoint } from './manage-webhook-endpoints.ts';
import type { WebhookDeps } from './webhook-runtime.ts';

const DELIVERY_STATUSES = ['pending', 'overflow', 'delivered', 'failed', 'dropped'] as const;

export const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** `nextCursor` of the previous page. */
  cursor: z.string().max(200).optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
});

const AttemptView = z.object({
  attempt: z.number().int(),
  startedAt: z.string(),
  httpStatus: z.number().int().nullable(),
  responseBody: z.string().nullable(),
  latencyMs: z.number().int().nullable(),
  error: z.string().nullable(),
});

const WebhookDelivery = z.object({
  id: z.uuid(),
  event: z.string(),
  fileId: z.uuid().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  /** Attempts made so far (at most 3). */
  attempt: z.number().int(),
  httpStatus: z.number().int().nullable(),
  /** What the receiver answered, at most 1 KB. */
  responseBody: z.string().nullable(),
  latencyMs: z.number().int().nullable(),
  error: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  attempts: z.array(AttemptView),
});

export const DeliveriesPage = z.object({ deliveries: z.array(WebhookDelivery), nextCursor: z.string().nullable() });

const Row = z.object({
  id: z.uuid(),
  event: z.string(),
  fileId: z.uuid().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  attempt: z.number(),
  httpStatus: z.number().nullable(),
  responseBody: z.string().nullable(),
  latencyMs: z.number().nullable(),
  error: z.string().nullable(),
  nextAttemptAt: z.date().nullable(),
  createdAt: z.date(),
  // microseconds kept as text, so the cursor sorts exactly as PostgreSQL does
  createdAtKey: z.string(),
  finishedAt: z.date().nullable(),
  attempts: z.array(
    z.object({
      attempt: z.number(),
      startedAt: z.string(),
      httpStatus: z.number().nullable(),
      responseBody: z.string().nullable(),
      latencyMs: z.number().nullable(),
      error: z.string().nullable(),
    }),
  ),
});

function encodeCursor(createdAtKey: string, id: string) {
  return Buffer.from(JSON.stringify([createdAtKey, id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAtKey: string; id: string } {
  try {
    const [createdAtKey, id] = z.tuple([z.string().max(64), z.uuid()]).parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { createdAtKey, id };
  } catch (error) {
    throw new DomainError('BAD_REQUEST', 'Invalid cursor', { cause: error });
  }
}

/**
 * An endpoint's delivery history, newest first, a page at a time (keyset on
 * creation time and id, so pages neither skip nor repeat while new
 * deliveries arrive). Each delivery carries every attempt with what the
 * receiver said. Only those who manage the endpoint see it.
 */
export async function listWebhookDeliveries(
  deps: Pick<WebhookDeps, 'db'>,
  user: AuthUser,
  endpointId: string,
  query: z.output<typeof DeliveriesQuery>,
): Promise<z.infer<typeof DeliveriesPage>> {
  await requireManageableEndpoint(deps, user, endpointId);
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const rows = await deps.db.any(sql.type(Row)`
    select d.id, d.event, d.file_id as "fileId", d.status, d.attempts as attempt, d.last_http_status as "httpStatus",
           d.last_response_body as "responseBody", d.last_latency_ms as "latencyMs", d.last_error as error,
           d.next_attempt_at as "nextAttemptAt", d.created_at as "createdAt",
           to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as "createdAtKey", d.finished_at as "finishedAt",
           coalesce((select json_agg(json_build_object(
                       'attempt', a.attempt, 'startedAt', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                       'httpStatus', a.http_status, 'responseBody', a.response_body, 'latencyMs', a.latency_ms, 'error', a.error) order by a.attempt)
                       from webhook_delivery_attempts a where a.delivery_id = d.id), '[]'::json) as attempts
      from webhook_deliveries d
     where d.endpoint_id = ${endpointId}
       ${query.status ? sql.fragment`and d.status = ${query.status}` : sql.fragment``}
       ${after ? sql.fragment`and (d.created_at, d.id) < (${after.createdAtKey}::timestamp at time zone 'UTC', ${after.id}::uuid)` : sql.fragment``}
     order by d.created_at desc, d.id desc
     limit ${query.limit + 1}`);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    deliveries: page.map(({ createdAtKey: _key, ...row }) => ({
      ...row,
      nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
      finishedAt: row.finishedAt?.toISOString() ?? null,
    })),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last.createdAtKey, last.id) : null,
  };
}
