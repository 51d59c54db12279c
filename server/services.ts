import type { Deps } from './deps.ts';
import { createEmailService, type EmailService } from './email/email-service.ts';
import { createConversionService, type ConversionService } from './conversion-jobs/service.ts';
import { createConversionEvents, type ConversionEvents } from './conversion-jobs/events.ts';
import { lazyEngine } from './conversion-jobs/engine-provider.ts';
import { resolveSigningSecrets } from './secrets.ts';
import { createObjectStore, type ObjectStore } from './storage/storage.ts';

/**
 * Domain services the routes call, built once per app from its deps. Each
 * area adds its entry here; routers reach them as ctx.deps.services.<area>.
 */
export interface AppServices {
  email: EmailService;
  conversion: ConversionService;
  conversionEvents: ConversionEvents;
  store: ObjectStore;
  /** The root secret of mailed links (shares, invites, unsubscribe); each purpose derives its own key. */
  linkSecret: string;
}

export function buildServices(deps: Deps): AppServices {
  const store = createObjectStore(deps.config.storage);
  const secrets = resolveSigningSecrets(deps.config);
  return {
    email: createEmailService(deps),
    conversion: createConversionService({ ...deps, store, engine: lazyEngine(deps), downloadSecret: secrets.download }),
    conversionEvents: createConversionEvents(deps.databaseUrl, deps.log),
    store,
    linkSecret: secrets.download,
  };
}
