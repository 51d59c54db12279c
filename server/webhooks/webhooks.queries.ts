import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';
import type { DatabaseTransactionConnection } from 'slonik';
import type { AuthUser } from '../auth/users.ts';

type Connection = Pick<Database, 'any' | 'anyFirst' | 'one' | 'maybeOne' | 'query' | 'oneFirst'> | DatabaseTransactionConnection;

export const WEBHOOK_EVENTS = ['conversion.completed', 'conversion.failed'] as const;

export const EndpointRow = z.object({
  id: z.uuid(),
  ownerId: z.uuid(),
  tenantId: z.uuid().nullable(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  description: z.string().nullable(),
  enabled: z.boolean(),
  consecutiveFailures: z.number().int(),
  disabledReason: z.enum(['manual', 'consecutive_failures', 'gone']).nullable(),
  disabledAt: z.date().nullable(),
  rotatingUntil: z.date().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type EndpointRow = z.infer<typeof EndpointRow>;

const endpointColumns = sql.fragment`
  e.id, e.owner_id as "ownerId", e.tenant_id as "tenantId", e.url, e.events, e.description, e.enabled,
  e.consecutive_failures as "consecutiveFailures", e.disabled_reason as "disabledReason", e.disabled_at as "disabledAt",
  e.rotating_until as "rotatingUntil", e.created_at as "createdAt", e.updated_at as "updatedAt"`;

/**
 * Who may see and manage an endpoint: its creator when it is personal; any
 * admin of its tenant when it is tenant-scoped (and nobody else, not even the
 * creator once they are no longer a tenant admin).
 */
function manageableBy(user: AuthUser) {
  const tenantClause = user.isTenantAdmin && user.tenantId ? sql.fragment`or (e.tenant_id is not null and e.tenant_id = ${user.tenantId})` : sql.fragment``;
  return sql.fragment`((e.tenant_id is null and e.owner_id = ${user.id}) ${tenantClause})`;
}

export async function insertEndpoint(
  tx: Connection,
  row: { id: string; ownerId: string; tenantId: string | null; url: string; events: string[]; description: string | null; secretCiphertext: string },
): Promise<EndpointRow> {
  return tx.one(sql.type(EndpointRow)`
    with e as (
      insert into webhook_endpoints (id, owner_id, tenant_id, url, events, description, secret_ciphertext)
      values (${row.id}, ${row.ownerId}, ${row.tenantId}, ${row.url}, ${sql.array(row.events, 'text')}, ${row.description}, ${row.secretCiphertext})
      returning *)
    select ${endpointColumns} from e`);
}

/** Endpoints in one scope (a user's personal ones, or a tenant's), counted under a lock on the scope so two creates cannot both take the last place. */
export async function countEndpointsInScopeLocked(tx: Connection, scope: { ownerId: string; tenantId: string | null }): Promise<number> {
  const key = scope.tenantId ? `webhook-scope:tenant:${scope.tenantId}` : `webhook-scope:user:${scope.ownerId}`;
  await tx.query(sql.type(AnyRow)`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
  return tx.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from webhook_endpoints e
     where ${scope.tenantId ? sql.fragment`e.tenant_id = ${scope.tenantId}` : sql.fragment`e.tenant_id is null and e.owner_id = ${scope.ownerId}`}`);
}

export async function findManageableEndpoint(db: Connection, user: AuthUser, endpointId: string): Promise<EndpointRow | null> {
  return db.maybeOne(sql.type(EndpointRow)`select ${endpointColumns} from webhook_endpoints e where e.id = ${endpointId} and ${manageableBy(user)}`);
}

export async function listManageableEndpoints(db: Connection, user: AuthUser): Promise<readonly EndpointRow[]> {
  return db.any(sql.type(EndpointRow)`select ${endpointColumns} from webhook_endpoints e where ${manageableBy(user)} order by e.created_at, e.id`);
}

export type EndpointChanges = { url?: string; events?: string[]; description?: string | null; enabled?: boolean };

/**
 * Applies the changes to an endpoint the user may manage. Enabling clears the
 * disabled state and resets the failure counter; disabling by hand records
 * `manual`.
 */
export async function updateManageableEndpoint(db: Connection, user: AuthUser, endpointId: string, changes: EndpointChanges): Promise<EndpointRow | null> {
  const sets = [sql.fragment`updated_at = now()`];
  if (changes.url !== undefined) sets.push(sql.fragment`url = ${changes.url}`);
  if (changes.events !== undefined) sets.push(sql.fragment`events = ${sql.array(changes.events, 'text')}`);
  if (changes.description !== undefined) sets.push(sql.fragment`description = ${changes.description}`);
  if (changes.enabled === true) sets.push(sql.fragment`enabled = true, disabled_reason = null, disabled_at = null, consecutive_failures = 0`);
  if (changes.enabled === false) {
    sets.push(sql.fragment`enabled = false, disabled_reason = coalesce(e.disabled_reason, 'manual'), disabled_at = coalesce(e.disabled_at, now())`);
  }
  return db.maybeOne(sql.type(EndpointRow)`
    update webhook_endpoints e set ${sql.join(sets, sql.fragment`, `)}
     where e.id = ${endpointId} and ${manageableBy(user)}
    returning ${endpointColumns}`);
}

export async function deleteManageableEndpoint(db: Connection, user: AuthUser, endpointId: string): Promise<boolean> {
  const result = await db.query(sql.type(AnyRow)`delete from webhook_endpoints e where e.id = ${endpointId} and ${manageableBy(user)}`);
  return result.rowCount > 0;
}

/** The current secret becomes the previous one until `rotatingUntil`; a rotation during a rotation drops the oldest. */
export async function rotateManageableEndpointSecret(
  db: Connection,
  user: AuthUser,
  endpointId: string,
  secretCiphertext: string,
  rotatingUntil: Date,
): Promise<EndpointRow | null> {
  return db.maybeOne(sql.type(EndpointRow)`
    update webhook_endpoints e
       set previous_secret_ciphertext = e.secret_ciphertext, secret_ciphertext = ${secretCiphertext},
           rotating_until = ${rotatingUntil.toISOString()}::timestamptz, updated_at = now()
     where e.id = ${endpointId} and ${manageableBy(user)}
    returning ${endpointColumns}`);
}

/** Enabled endpoints that hear these users' personal conversions or these tenants' conversions, with their overflow backlog. */
const SubscribedEndpoint = z.object({ id: z.uuid(), ownerId: z.uuid(), tenantId: z.uuid().nullable(), events: z.array(z.string()), waiting: z.number() });
export type SubscribedEndpoint = z.infer<typeof SubscribedEndpoint>;

export async function findSubscribedEndpoints(tx: Connection, userIds: string[], tenantIds: string[]): Promise<readonly SubscribedEndpoint[]> {
  if (userIds.length === 0 && tenantIds.length === 0) return [];
  return tx.any(sql.type(SubscribedEndpoint)`
    select e.id, e.owner_id as "ownerId", e.tenant_id as "tenantId", e.events,
           (select count(*)::int from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'overflow') as waiting
      from webhook_endpoints e
     where e.enabled
       and ((e.tenant_id is null and e.owner_id = any(${sql.array(userIds, 'uuid')})) or e.tenant_id = any(${sql.array(tenantIds, 'uuid')}))
     order by e.created_at, e.id`);
}

export type NewDelivery = {
  endpointId: string;
  eventId: number | null;
  event: string;
  fileId: string | null;
  userId: string | null;
  tenantId: string | null;
  body: string;
  status: 'pending' | 'overflow' | 'dropped';
};

/** Inserts deliveries; one that already exists for its (event, endpoint) is skipped and not returned. */
export async function insertDeliveries(tx: Connection, rows: NewDelivery[]): Promise<ReadonlyArray<{ id: string; status: string }>> {
  if (rows.length === 0) return [];
  return tx.any(sql.type(z.object({ id: z.uuid(), status: z.string() }))`
    insert into webhook_deliveries (endpoint_id, event_id, event, file_id, user_id, tenant_id, body, status, finished_at, last_error)
    select endpoint_id, event_id, event, file_id, user_id, tenant_id, body, status,
           case when status = 'dropped' then now() end,
           case when status = 'dropped' then 'dropped: the overflow queue of this endpoint was full' end
      from ${sql.unnest(
        rows.map((row) => [row.endpointId, row.eventId, row.event, row.fileId, row.userId, row.tenantId, row.body, row.status]),
        ['uuid', 'int8', 'text', 'uuid', 'uuid', 'uuid', 'text', 'text'],
      )} as t(endpoint_id, event_id, event, file_id, user_id, tenant_id, body, status)
    on conflict (event_id, endpoint_id) do nothing
    returning id, status`);
}

/** A delivery with what an attempt needs of its endpoint. */
export const AttemptTarget = z.object({
  deliveryId: z.uuid(),
  endpointId: z.uuid(),
  event: z.string(),
  status: z.string(),
  attempts: z.number(),
  body: z.string(),
  url: z.string(),
  enabled: z.boolean(),
  secretCiphertext: z.string(),
  previousSecretCiphertext: z.string().nullable(),
  rotatingUntil: z.date().nullable(),
});
export type AttemptTarget = z.infer<typeof AttemptTarget>;

export async function loadAttemptTargets(db: Connection, deliveryIds: string[]): Promise<Map<string, AttemptTarget>> {
  const rows = await db.any(sql.type(AttemptTarget)`
    select d.id as "deliveryId", d.endpoint_id as "endpointId", d.event, d.status, d.attempts, d.body,
           e.url, e.enabled, e.secret_ciphertext as "secretCiphertext", e.previous_secret_ciphertext as "previousSecretCiphertext",
           e.rotating_until as "rotatingUntil"
      from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
     where d.id = any(${sql.array(deliveryIds, 'uuid')})`);
  return new Map(rows.map((row) => [row.deliveryId, row]));
}

/** What one try gave; stored as an attempt row and as the delivery's latest state. */
export type AttemptRecord = {
  attempt: number;
  startedAt: Date;
  httpStatus: number | null;
  responseBody: string | null;
  latencyMs: number | null;
  error: string | null;
};

/**
 * Records attempt N of a delivery and moves it to `status`, but only if it is
 * still `pending` with N-1 attempts behind it: a job run twice (a crashed
 * worker's job coming back) records once. False when someone else already did.
 */
export async function recordDeliveryAttempt(
  tx: Connection,
  deliveryId: string,
  record: AttemptRecord,
  next: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt: Date | null },
): Promise<boolean> {
  const moved = await tx.query(sql.type(AnyRow)`
    update webhook_deliveries
       set status = ${next.status}, attempts = ${record.attempt},
           next_attempt_at = ${next.nextAttemptAt?.toISOString() ?? null}::timestamptz,
           last_http_status = ${record.httpStatus}, last_response_body = ${record.responseBody},
           last_latency_ms = ${record.latencyMs}, last_error = ${record.error}, updated_at = now(),
           finished_at = case when ${next.status} = 'pending' then null else now() end
     where id = ${deliveryId} and status = 'pending' and attempts = ${record.attempt - 1}`);
  if (moved.rowCount === 0) return false;
  await tx.query(sql.type(AnyRow)`
    insert into webhook_delivery_attempts (delivery_id, attempt, started_at, http_status, response_body, latency_ms, error)
    values (${deliveryId}, ${record.attempt}, ${record.startedAt.toISOString()}::timestamptz, ${record.httpStatus}, ${record.responseBody},
            ${record.latencyMs}, ${record.error})`);
  return true;
}

/** A pending delivery whose endpoint was disabled, or what waits in a disabled endpoint's overflow queue, ends failed without a try. */
export async function failUnsentDeliveries(tx: Connection, where: { deliveryId?: string; endpointId?: string }, reason: string): Promise<number> {
  const target = where.deliveryId
    ? sql.fragment`id = ${where.deliveryId} and status = 'pending'`
    : // pending deliveries of a disabled endpoint are the delivery worker's to fail, with its own reason
      sql.fragment`endpoint_id = ${where.endpointId ?? null} and status = 'overflow'`;
  const result = await tx.query(sql.type(AnyRow)`
    update webhook_deliveries set status = 'failed', last_error = ${reason}, next_attempt_at = null, updated_at = now(), finished_at = now()
     where ${target}`);
  return result.rowCount;
}

/**
 * Records successful attempts in one statement: each delivery still pending
 * with attempt-1 attempts behind it becomes delivered with its attempt row,
 * and its endpoint's run of failures is over. Returns the deliveries it
 * recorded (a job run twice is recorded once).
 */
export async function recordDeliveredAttempts(db: Connection, records: Array<AttemptRecord & { deliveryId: string }>): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  const ids = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    with t as (
      select * from ${sql.unnest(
        records.map((record) => [record.deliveryId, record.attempt, record.startedAt.toISOString(), record.httpStatus, record.responseBody, record.latencyMs]),
        ['uuid', 'int4', 'timestamptz', 'int4', 'text', 'int4'],
      )} as t(id, attempt, started_at, http_status, response_body, latency_ms)
    ), moved as (
      update webhook_deliveries d
         set status = 'delivered', attempts = t.attempt, next_attempt_at = null, last_http_status = t.http_status,
             last_response_body = t.response_body, last_latency_ms = t.latency_ms, last_error = null, updated_at = now(), finished_at = now()
        from t
       where d.id = t.id and d.status = 'pending' and d.attempts = t.attempt - 1
      returning d.id, d.endpoint_id
    ), attempts as (
      insert into webhook_delivery_attempts (delivery_id, attempt, started_at, http_status, response_body, latency_ms)
      select t.id, t.attempt, t.started_at, t.http_status, t.response_body, t.latency_ms from t join moved on moved.id = t.id
    ), reset as (
      update webhook_endpoints e set consecutive_failures = 0
       where e.id in (select endpoint_id from moved) and e.consecutive_failures > 0
    )
    select id from moved`);
  return new Set(ids);
}

/** One more delivery exhausted its retries; the count after it. */
export async function countEndpointFailure(tx: Connection, endpointId: string): Promise<number | null> {
  return tx
    .maybeOne(sql.type(z.object({ failures: z.number() }))`
    update webhook_endpoints set consecutive_failures = consecutive_failures + 1 where id = ${endpointId} returning consecutive_failures as failures`)
    .then((row) => row?.failures ?? null);
}

/** Disables an enabled endpoint; the disable time when this call did it, null when it already was (so one notice goes out). */
export async function disableEndpoint(tx: Connection, endpointId: string, reason: 'consecutive_failures' | 'gone'): Promise<Date | null> {
  const row = await tx.maybeOne(sql.type(z.object({ disabledAt: z.date() }))`
    update webhook_endpoints set enabled = false, disabled_reason = ${reason}, disabled_at = now(), disabled_notified_at = null, updated_at = now()
     where id = ${endpointId} and enabled returning disabled_at as "disabledAt"`);
  return row?.disabledAt ?? null;
}
