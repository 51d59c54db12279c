import type { Config } from './config.ts';

/** An absolute link to this service for mail and answers: PUBLIC_BASE_URL, else the local port. */
export function publicUrl(config: Pick<Config, 'publicBaseUrl' | 'port'>, pathAndQuery: string): string {
  const base = (config.publicBaseUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, '');
  return `${base}${pathAndQuery.startsWith('/') ? '' : '/'}${pathAndQuery}`;
}
