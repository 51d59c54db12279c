import { fetchOrThrow } from './errors.ts';
import { apiUrl, type FolioClientOptions } from './options.ts';

/**
 * A session token from a local development server (POST /api/dev/token);
 * any other server answers NOT_FOUND. What `npm run token` prints, for a page.
 */
export async function mintDevToken(options: Pick<FolioClientOptions, 'baseUrl' | 'fetch'>, email: string): Promise<string> {
  const response = await fetchOrThrow(
    options.fetch ?? fetch,
    apiUrl(options, '/api/dev/token'),
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) },
    (answer) => answer.status === 201,
  );
  return ((await response.json()) as { token: string }).token;
}

/** Whether the server mints development tokens (a local development server). */
export async function devTokensAvailable(options: Pick<FolioClientOptions, 'baseUrl' | 'fetch'>): Promise<boolean> {
  try {
    return (await (options.fetch ?? fetch)(apiUrl(options, '/api/dev/token'))).status === 204;
  } catch {
    return false;
  }
}
