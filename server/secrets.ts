import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';

/** Constant-time equality for secrets of any length (hashing first hides the length). */
export function secretsEqual(given: string | undefined | null, expected: string | undefined | null): boolean {
  if (!given || !expected) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export type SigningSecrets = { jwt?: string; download: string; webhookKey: string };

/**
 * Signing secrets from the environment. For the zero-configuration local run
 * (no AUTH_JWT_SECRET / AUTH_JWKS_URL, not production) we generate them once
 * and keep them in the data folder, so `npm run token` and the server agree
 * and restarts keep download links valid. Production must set them.
 */
export function resolveSigningSecrets(config: Config): SigningSecrets {
  // routes ask per request: the local file is read once per configuration
  let resolved = resolvedFor.get(config);
  if (!resolved) {
    resolved = readSigningSecrets(config);
    resolvedFor.set(config, resolved);
  }
  return resolved;
}

const resolvedFor = new WeakMap<Config, SigningSecrets>();

function readSigningSecrets(config: Config): SigningSecrets {
  const needsLocal = !config.secrets.downloadToken || !config.secrets.webhookKey || (!config.auth.jwtSecret && !config.auth.jwksUrl);
  if (!needsLocal) return { jwt: config.auth.jwtSecret, download: config.secrets.downloadToken!, webhookKey: config.secrets.webhookKey! };
  if (config.env === 'production') {
    throw new Error('Production needs AUTH_JWT_SECRET (or AUTH_JWKS_URL), DOWNLOAD_TOKEN_SECRET and WEBHOOK_SECRET_KEY');
  }
  const file = path.join(config.dataDir, 'local-secrets.json');
  let local: Record<string, string> = {};
  try {
    local = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    local = { jwt: randomBytes(32).toString('base64url'), download: randomBytes(32).toString('base64url'), webhookKey: randomBytes(32).toString('base64url') };
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(local), { mode: 0o600 });
  }
  return {
    jwt: config.auth.jwtSecret ?? (config.auth.jwksUrl ? undefined : local.jwt),
    download: config.secrets.downloadToken ?? local.download!,
    webhookKey: config.secrets.webhookKey ?? local.webhookKey!,
  };
}
