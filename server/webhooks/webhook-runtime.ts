import type { Deps } from '../deps.ts';
import { createResolver, createSafeHttpClient, type ResolveHost, type SafeHttpClient } from '../net/safe-fetch.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { deriveSecretKey, type SecretKey } from './webhook-secrets.ts';
import { createWebhookQueues, WEBHOOK_POLICY, type WebhookPolicy } from './webhooks.jobs.ts';

/**
 * What every webhook function receives first: the app's deps plus the pieces
 * built once per process (the guarded HTTPS client with its keep-alive pool,
 * the secret-encryption key, the download-link secret, the policy numbers).
 */
export type WebhookDeps = Pick<Deps, 'db' | 'boss' | 'log' | 'clock' | 'config'> & {
  http: SafeHttpClient;
  secretKey: SecretKey;
  downloadSecret: string;
  /** Where download links point: PUBLIC_BASE_URL, else this server on localhost. */
  publicBaseUrl: string;
  policy: WebhookPolicy;
  /** Creates the webhook queues once per process, before the first job is sent (any process may dispatch). */
  queuesReady: () => Promise<void>;
};

/** Tests and the benchmark shorten timeouts and delays, lift limits, or hand in their DNS. */
export type WebhookOverrides = { policy?: Partial<WebhookPolicy>; resolve?: ResolveHost };

export function createWebhookDeps(deps: Pick<Deps, 'db' | 'boss' | 'log' | 'clock' | 'config'>, overrides: WebhookOverrides = {}): WebhookDeps {
  const { config } = deps;
  const secrets = resolveSigningSecrets(config);
  const resolve = overrides.resolve ?? createResolver({ servers: config.webhooks.dnsServers });
  const http = createSafeHttpClient({ resolve, policy: { allowLoopback: config.webhooks.allowLoopbackReceiver } });
  const policy: WebhookPolicy = { ...WEBHOOK_POLICY, ...overrides.policy, limits: { ...WEBHOOK_POLICY.limits, ...overrides.policy?.limits } };
  let queues: Promise<void> | undefined;
  return {
    ...deps,
    queuesReady: () => {
      queues ??= createWebhookQueues(deps.boss).catch((error: unknown) => {
        queues = undefined;
        throw error;
      });
      return queues;
    },
    http,
    secretKey: deriveSecretKey(secrets.webhookKey),
    downloadSecret: secrets.download,
    publicBaseUrl: (config.publicBaseUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, ''),
    policy,
  };
}
