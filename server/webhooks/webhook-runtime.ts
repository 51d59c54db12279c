import type { CoreDeps, Deps } from '../deps.ts';
import { createResolver, createSafeHttpClient, type ResolveHost, type SafeHttpClient } from '../net/safe-fetch.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { deriveSecretKey, type SecretKey } from './webhook-secrets.ts';
import { createWebhookQueues, WEBHOOK_POLICY, type WebhookPolicy } from './webhooks.jobs.ts';

/**
 * What the webhook area holds once per process (a process service, see
 * server/services.ts): the guarded HTTPS client with its keep-alive pool,
 * the secret-encryption key, the download-link secret, the policy numbers.
 */
export type WebhookRuntime = {
  http: SafeHttpClient;
  secretKey: SecretKey;
  downloadSecret: string;
  /** Where download links point: PUBLIC_BASE_URL, else this server on localhost. */
  publicBaseUrl: string;
  policy: WebhookPolicy;
  /** Creates the webhook queues once per process, before the first job is sent (any process may dispatch). */
  queuesReady: () => Promise<void>;
};

/** What every webhook function receives first. */
export type WebhookDeps = Pick<Deps, 'db' | 'boss' | 'log' | 'clock' | 'config'> & WebhookRuntime;

/** Tests and the benchmark shorten timeouts and delays, lift limits, or hand in their DNS. */
export type WebhookOverrides = { policy?: Partial<WebhookPolicy>; resolve?: ResolveHost };

export function createWebhookRuntime(core: Pick<CoreDeps, 'config' | 'boss'>, overrides: WebhookOverrides = {}): WebhookRuntime {
  const { config } = core;
  const secrets = resolveSigningSecrets(config);
  const resolve = overrides.resolve ?? createResolver({ servers: config.webhooks.dnsServers });
  let queues: Promise<void> | undefined;
  return {
    http: createSafeHttpClient({ resolve, policy: { allowLoopback: config.webhooks.allowLoopbackReceiver } }),
    secretKey: deriveSecretKey(secrets.webhookKey),
    downloadSecret: secrets.download,
    publicBaseUrl: (config.publicBaseUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, ''),
    policy: { ...WEBHOOK_POLICY, ...overrides.policy, limits: { ...WEBHOOK_POLICY.limits, ...overrides.policy?.limits } },
    queuesReady: () => {
      queues ??= createWebhookQueues(core.boss).catch((error: unknown) => {
        queues = undefined;
        throw error;
      });
      return queues;
    },
  };
}

/** The process's webhook runtime over these deps, or a runtime of its own when overrides are given. */
export function webhookDeps(deps: Deps, overrides?: WebhookOverrides): WebhookDeps {
  return { ...deps, ...(overrides ? createWebhookRuntime(deps, overrides) : deps.webhooks) };
}
