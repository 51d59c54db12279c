import type { CoreDeps, Deps } from '../deps.ts';
import type { AddressPolicy } from '../net/address-policy.ts';
import { createResolver, createSafeHttpClient, type ResolveHost, type SafeHttpClient } from '../net/safe-fetch.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { deriveSecretKey, type SecretKey } from '../webhooks/webhook-secrets.ts';
import type { BucketOptions } from './customer-bucket.ts';
import { ensureStorageQueues } from './storage.jobs.ts';
import { cloudCredentials } from '../cloud-credentials.ts';

/**
 * What imports hold once per process (a process service, see
 * server/services.ts): the guarded HTTPS client for import by URL, the key
 * that encrypts connections' access keys, and how customer buckets are
 * reached.
 */
export type ImportRuntime = {
  http: SafeHttpClient;
  /** AES key for connections' secret access keys: WEBHOOK_SECRET_KEY through its own HKDF purpose. */
  secretKey: SecretKey;
  policy: AddressPolicy;
  bucketOptions: BucketOptions;
  queuesReady: () => Promise<void>;
};

/**
 * What every import function receives first. `watchConversion`, in the
 * worker process, hears the end of an imported file's conversion at once
 * (LISTEN) to queue its write-back; the minute tick is the safety net.
 */
export type ImportDeps = Pick<Deps, 'db' | 'boss' | 'log' | 'clock' | 'config' | 'store' | 'engine' | 'email'> & {
  importer: ImportRuntime;
  watchConversion?: (importId: string, fileId: string) => Promise<void>;
};

export function createImportRuntime(core: Pick<CoreDeps, 'config' | 'boss'>, overrides: { resolve?: ResolveHost } = {}): ImportRuntime {
  const { config } = core;
  const policy: AddressPolicy = { allowLoopback: config.imports.allowLoopback };
  const cloud = config.conversion.bedrock;
  return {
    http: createSafeHttpClient({ resolve: overrides.resolve ?? createResolver(), policy }),
    secretKey: deriveSecretKey(resolveSigningSecrets(config).webhookKey, 'storage-connection-secret'),
    policy,
    bucketOptions: {
      policy,
      timeoutMs: config.imports.timeoutMs,
      stsEndpoint: config.imports.stsEndpoint,
      serviceCredentials: cloudCredentials(cloud),
      sessions: new Map(),
    },
    queuesReady: () => ensureStorageQueues(core.boss),
  };
}
