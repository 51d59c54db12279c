import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import { DomainError } from '../errors.ts';
import { SafeFetchError } from '../net/safe-fetch.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { encryptEndpointSecret, generateEndpointSecret } from './webhook-secrets.ts';
import {
  countEndpointsInScopeLocked,
  deleteManageableEndpoint,
  findManageableEndpoint,
  insertEndpoint,
  listManageableEndpoints,
  rotateManageableEndpointSecret,
  updateManageableEndpoint,
  EndpointRow,
  WEBHOOK_EVENTS,
  type EndpointChanges,
} from './webhooks.queries.ts';

/** An endpoint as its managers see it: the row without its owner, times as ISO strings. */
export const WebhookEndpoint = EndpointRow.omit({ ownerId: true }).extend({
  disabledAt: z.string().nullable(),
  /** End of the 1-hour window in which the previous secret still signs deliveries. */
  rotatingUntil: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

/** Returned at creation and rotation only: the secret is never readable again. */
export const WebhookEndpointWithSecret = WebhookEndpoint.extend({ secret: z.string() });

const Events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length)
  .transform((events) => [...new Set(events)]);

export const CreateWebhookInput = z.object({
  url: z.string().min(1).max(2048),
  events: Events.optional(),
  description: z.string().max(500).optional(),
  /** Makes the endpoint the tenant's: it hears every user's conversions; only tenant admins may. */
  tenantId: z.uuid().optional(),
});

export const UpdateWebhookInput = z.object({
  url: z.string().min(1).max(2048).optional(),
  events: Events.optional(),
  description: z.string().max(500).nullable().optional(),
  /** true re-enables a disabled endpoint and resets its failure count. */
  enabled: z.boolean().optional(),
});

function toView({ ownerId: _ownerId, ...row }: EndpointRow): WebhookEndpoint {
  return {
    ...row,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    rotatingUntil: row.rotatingUntil?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The URL as we will call it, or WEBHOOK_URL_REJECTED saying why (checked and resolved now; checked again at every delivery). */
async function vetEndpointUrl(deps: Pick<WebhookDeps, 'http'>, url: string): Promise<string> {
  try {
    return (await deps.http.vet(url.trim())).url.href;
  } catch (error) {
    if (error instanceof SafeFetchError) throw new DomainError('WEBHOOK_URL_REJECTED', `Webhook URL rejected: ${error.message}`, { cause: error });
    throw error;
  }
}

const notFound = () => new DomainError('NOT_FOUND', 'Webhook endpoint not found');

/** Creates an endpoint (personal, or the tenant's when `tenantId` is given by one of its admins); the secret is in the answer only. */
export async function createWebhookEndpoint(
  deps: Pick<WebhookDeps, 'db' | 'http' | 'secretKey' | 'policy'>,
  user: AuthUser,
  input: z.output<typeof CreateWebhookInput>,
): Promise<z.infer<typeof WebhookEndpointWithSecret>> {
  const tenantId = input.tenantId ?? null;
  if (tenantId && !(user.isTenantAdmin && user.tenantId === tenantId)) {
    throw new DomainError('FORBIDDEN', 'Only an admin of this tenant can create its webhook endpoints');
  }
  const url = await vetEndpointUrl(deps, input.url);
  const id = randomUUID();
  const secret = generateEndpointSecret();
  const row = await deps.db.transaction(async (tx) => {
    const existing = await countEndpointsInScopeLocked(tx, { ownerId: user.id, tenantId });
    if (existing >= deps.policy.maxEndpointsPerScope) {
      throw new DomainError('TOO_MANY_WEBHOOK_ENDPOINTS', `At most ${deps.policy.maxEndpointsPerScope} webhook endpoints per ${tenantId ? 'tenant' : 'user'}`);
    }
    return insertEndpoint(tx, {
      id,
      ownerId: user.id,
      tenantId,
      url,
      events: input.events ?? [...WEBHOOK_EVENTS],
      description: input.description ?? null,
      secretCiphertext: encryptEndpointSecret(deps.secretKey, id, secret),
    });
  });
  return { ...toView(row), secret };
}

export async function listWebhookEndpoints(deps: Pick<WebhookDeps, 'db'>, user: AuthUser): Promise<WebhookEndpoint[]> {
  return (await listManageableEndpoints(deps.db, user)).map(toView);
}

export async function updateWebhookEndpoint(
  deps: Pick<WebhookDeps, 'db' | 'http'>,
  user: AuthUser,
  endpointId: string,
  input: z.output<typeof UpdateWebhookInput>,
): Promise<WebhookEndpoint> {
  // Someone who cannot see the endpoint learns nothing from its URL being checked first.
  if (!(await findManageableEndpoint(deps.db, user, endpointId))) throw notFound();
  const changes: EndpointChanges = { events: input.events, description: input.description, enabled: input.enabled };
  if (input.url !== undefined) changes.url = await vetEndpointUrl(deps, input.url);
  const row = await updateManageableEndpoint(deps.db, user, endpointId, changes);
  if (!row) throw notFound();
  return toView(row);
}

export async function deleteWebhookEndpoint(deps: Pick<WebhookDeps, 'db'>, user: AuthUser, endpointId: string): Promise<{ deleted: true; id: string }> {
  if (!(await deleteManageableEndpoint(deps.db, user, endpointId))) throw notFound();
  return { deleted: true, id: endpointId };
}

/** A new secret now; the old one keeps signing deliveries (beside the new) for 1 hour. */
export async function rotateWebhookSecret(
  deps: Pick<WebhookDeps, 'db' | 'secretKey' | 'clock' | 'policy'>,
  user: AuthUser,
  endpointId: string,
): Promise<z.infer<typeof WebhookEndpointWithSecret>> {
  const secret = generateEndpointSecret();
  const rotatingUntil = new Date(deps.clock.now().getTime() + deps.policy.rotationOverlapMs);
  const row = await rotateManageableEndpointSecret(deps.db, user, endpointId, encryptEndpointSecret(deps.secretKey, endpointId, secret), rotatingUntil);
  if (!row) throw notFound();
  return { ...toView(row), secret };
}

/** The endpoint when this user may manage it; NOT_FOUND otherwise (also for ids that exist but are someone else's). */
export async function requireManageableEndpoint(deps: Pick<WebhookDeps, 'db'>, user: AuthUser, endpointId: string): Promise<EndpointRow> {
  const endpoint = await findManageableEndpoint(deps.db, user, endpointId);
  if (!endpoint) throw notFound();
  return endpoint;
}
