import { lazyEngine } from './conversion-jobs/engine-provider.ts';
import type { CoreDeps, Deps, ProcessServices } from './deps.ts';
import { createEmailService } from './email/email-service.ts';
import { createIntakeMailer } from './intake/send-intake-mail.ts';
import { createOutOfBandSender, outOfBandSettings } from './out-of-band/out-of-band-sender.ts';
import { createObjectStore } from './storage/storage.ts';
import { createWebhookRuntime } from './webhooks/webhook-runtime.ts';
import { createImportRuntime } from './storage/import-runtime.ts';

export type ProcessDeps = { deps: Deps; close: () => Promise<void> };

/**
 * Builds the process-wide services once, for the API and the workers of this
 * process alike: one email library (provider clients, batchers, the provider
 * pair read once), one object store, one conversion engine, whose
 * worker-thread pool is sized to the cores of the machine — a second engine
 * would double it; one mail-provider API client for the intake replies,
 * whose access token is cached for the process; and one guarded HTTPS client
 * for webhooks. `close` stops the engine's pool.
 */
export function withProcessServices(core: CoreDeps, given: Partial<ProcessServices> = {}): ProcessDeps {
  const engine = given.engine ? undefined : lazyEngine(core);
  const services: ProcessServices = {
    email: given.email ?? createEmailService(core),
    store: given.store ?? createObjectStore(core.config.storage),
    engine: given.engine ?? engine!,
    mailer: given.mailer ?? createIntakeMailer(core),
    webhooks: given.webhooks ?? createWebhookRuntime(core),
    importer: given.importer ?? createImportRuntime(core),
    outOfBand: given.outOfBand ?? createOutOfBandSender(outOfBandSettings(core.config)),
  };
  return { deps: { ...core, ...services }, close: async () => void (await engine?.close()) };
}
