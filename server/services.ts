import type { Deps } from './deps.ts';
import { createEmailService, type EmailService } from './email/email-service.ts';

/**
 * Domain services the routes call, built once per app from its deps. Each
 * area adds its entry here; routers reach them as ctx.deps.services.<area>.
 */
export interface AppServices {
  email: EmailService;
}

export function buildServices(deps: Deps): AppServices {
  return {
    email: createEmailService(deps),
  };
}
