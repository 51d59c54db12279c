import type { Deps } from './deps.ts';
import { createEmailService, type EmailService } from './email/email-service.ts';
import { createConversionService, type ConversionService } from './conversion-jobs/service.ts';
import { createConversionEvents, type ConversionEvents } from './conversion-jobs/events.ts';
import { lazyEngine } from './conversion-jobs/engine-provider.ts';
import { resolveSigningSecrets } from './secrets.ts';
import { createObjectStore } from './storage/storage.ts';
import { createWebhookService, type WebhookService } from './webhooks/webhook-service.ts';

/**
 * Domain services the routes call, built once per app from its deps. Each
 * area adds its entry here; routers reach them as ctx.deps.services.<area>.
 */
export interface AppServices {
  email: EmailService;
  conversion: ConversionService;
  conversionEvents: ConversionEvents;
  webhooks: WebhookService;
}

export function buildServices(deps: Deps): AppServices {
  return {
    email: createEmailService(deps),
    conversion: createConversionService({
      ...deps,
      store: createObjectStore(deps.config.storage),
      engine: lazyEngine(deps),
      downloadSecret: resolveSigningSecrets(deps.config).download,
    }),
    conversionEvents: createConversionEvents(deps.databaseUrl, deps.log),
    webhooks: createWebhookService(deps),
  };
}
