import { z } from 'zod';
import { DeliveriesPage, DeliveriesQuery, listWebhookDeliveries } from '../webhooks/list-webhook-deliveries.ts';
import {
  CreateWebhookInput,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  UpdateWebhookInput,
  updateWebhookEndpoint,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../webhooks/manage-webhook-endpoints.ts';
import { testWebhookEndpoint, WebhookTestResult } from '../webhooks/test-webhook-endpoint.ts';
import { webhookDeps } from '../webhooks/webhook-runtime.ts';
import { router, userProcedure } from '../trpc/trpc.ts';

const ById = z.object({ id: z.uuid() });
const NOT_YOURS = '404 NOT_FOUND for an endpoint that does not exist or that the caller may not manage.';

/**
 * Webhook management (Bearer JWT). Personal endpoints are their creator's;
 * tenant endpoints (created with `tenantId`) hear every conversion of the
 * tenant's users and are managed by the tenant's admins only.
 */
export const webhooksRouter = router({
  create: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/webhooks',
        tags: ['webhooks'],
        summary: 'Creates an endpoint; the answer carries its signing secret, shown this once',
        description:
          'The URL must be public HTTPS: private, loopback, link-local, CGNAT, multicast, reserved and cloud-metadata addresses are refused in every spelling, and the host is resolved now and again at every delivery. 422 WEBHOOK_URL_REJECTED (with the reason); 403 FORBIDDEN for tenantId when the caller is not an admin of that tenant; 409 TOO_MANY_WEBHOOK_ENDPOINTS beyond 20 per user or tenant. events defaults to both conversion events.',
        protect: true,
      },
    })
    .input(CreateWebhookInput)
    .output(WebhookEndpointWithSecret)
    .mutation(({ ctx, input }) => createWebhookEndpoint(webhookDeps(ctx.deps), ctx.user, input)),

  list: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/webhooks',
        tags: ['webhooks'],
        summary: "The caller's endpoints (and their tenant's, for a tenant admin); secrets are never listed",
        protect: true,
      },
    })
    .input(z.void())
    .output(z.object({ endpoints: z.array(WebhookEndpoint) }))
    .query(async ({ ctx }) => ({ endpoints: await listWebhookEndpoints(ctx.deps, ctx.user) })),

  update: userProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/webhooks/{id}',
        tags: ['webhooks'],
        summary: 'Changes url, events, description or enabled; enabling resets the failure count',
        description: `422 WEBHOOK_URL_REJECTED for a new URL that is not public HTTPS. ${NOT_YOURS}`,
        protect: true,
      },
    })
    .input(ById.extend(UpdateWebhookInput.shape))
    .output(WebhookEndpoint)
    .mutation(({ ctx, input }) => {
      const { id, ...changes } = input;
      return updateWebhookEndpoint(webhookDeps(ctx.deps), ctx.user, id, changes);
    }),

  remove: userProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/webhooks/{id}',
        tags: ['webhooks'],
        summary: 'Deletes an endpoint and its history',
        description: NOT_YOURS,
        protect: true,
      },
    })
    .input(ById)
    .output(z.object({ deleted: z.literal(true), id: z.uuid() }))
    .mutation(({ ctx, input }) => deleteWebhookEndpoint(ctx.deps, ctx.user, input.id)),

  rotateSecret: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/webhooks/{id}/rotate-secret',
        tags: ['webhooks'],
        summary: 'A new secret now; for 1 hour (rotatingUntil) deliveries carry signatures with both the new and the old secret',
        description: NOT_YOURS,
        protect: true,
      },
    })
    .input(ById)
    .output(WebhookEndpointWithSecret)
    .mutation(({ ctx, input }) => rotateWebhookSecret(webhookDeps(ctx.deps), ctx.user, input.id)),

  deliveries: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/webhooks/{id}/deliveries',
        tags: ['webhooks'],
        summary: 'Delivery history, newest first: status, HTTP code, response body (at most 1 KB), latency and every attempt',
        description: `Pages of limit (1-100, default 20); pass nextCursor as cursor for the next page. 400 BAD_REQUEST for a bad cursor. ${NOT_YOURS}`,
        protect: true,
      },
    })
    .input(ById.extend(DeliveriesQuery.shape))
    .output(DeliveriesPage)
    .query(({ ctx, input }) => {
      const { id, ...query } = input;
      return listWebhookDeliveries(ctx.deps, ctx.user, id, query);
    }),

  test: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/webhooks/{id}/test',
        tags: ['webhooks'],
        summary: 'Sends a signed ping now and reports what the receiver answered',
        description: `Never retried; recorded in the delivery history; counts against the hourly delivery limits (429 TOO_MANY_REQUESTS with Retry-After). ${NOT_YOURS}`,
        protect: true,
      },
    })
    .input(ById)
    .output(WebhookTestResult)
    .mutation(({ ctx, input }) => testWebhookEndpoint(webhookDeps(ctx.deps), ctx.user, input.id)),
});
