import { errorFromResponse, toFolioError } from './errors.ts';
import { apiUrl, type FolioClientOptions } from './options.ts';

/**
 * A session token from a local development server (POST /api/dev/token);
 * any other server answers NOT_FOUND. What `npm run token` prints, for a page.
 */
export async function mintDevToken(options: Pick<FolioClientOptions, 'baseUrl' | 'fetch'>, email: string): Promise<string> {
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(apiUrl(options, '/api/dev/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
  } catch (error) {
    throw toFolioError(error);
  }
  if (response.status !== 201) throw await errorFromResponse(response);
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
