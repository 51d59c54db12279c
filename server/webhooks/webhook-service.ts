import type { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import type { Deps } from '../deps.ts';
import { listWebhookDeliveries, type DeliveriesQuery } from './list-webhook-deliveries.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type CreateWebhookInput,
  type UpdateWebhookInput,
} from './manage-webhook-endpoints.ts';
import { testWebhookEndpoint } from './test-webhook-endpoint.ts';
import { createWebhookDeps, type WebhookOverrides } from './webhook-runtime.ts';

/** What the webhook routes call, built once per app (one guarded HTTPS client, one derived key). */
export function createWebhookService(deps: Pick<Deps, 'db' | 'boss' | 'log' | 'clock' | 'config'>, overrides: WebhookOverrides = {}) {
  const webhookDeps = createWebhookDeps(deps, overrides);
  return {
    create: (user: AuthUser, input: z.output<typeof CreateWebhookInput>) => createWebhookEndpoint(webhookDeps, user, input),
    list: (user: AuthUser) => listWebhookEndpoints(webhookDeps, user),
    update: (user: AuthUser, endpointId: string, input: z.output<typeof UpdateWebhookInput>) => updateWebhookEndpoint(webhookDeps, user, endpointId, input),
    remove: (user: AuthUser, endpointId: string) => deleteWebhookEndpoint(webhookDeps, user, endpointId),
    rotateSecret: (user: AuthUser, endpointId: string) => rotateWebhookSecret(webhookDeps, user, endpointId),
    deliveries: (user: AuthUser, endpointId: string, query: z.output<typeof DeliveriesQuery>) => listWebhookDeliveries(webhookDeps, user, endpointId, query),
    test: (user: AuthUser, endpointId: string) => testWebhookEndpoint(webhookDeps, user, endpointId),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
