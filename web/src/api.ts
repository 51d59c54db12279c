import { createFolioClient, type FolioClientOptions, toFolioError } from '../../client-sdk/index.ts';

const TOKEN_KEY = 'folio.token';

/** The session token lives for the tab only: closing it signs out. */
export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY) ?? undefined,
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** Same origin: Folio serves this app. */
export const sdkOptions: FolioClientOptions = { baseUrl: '', token: session.token };
export const folio = createFolioClient(sdkOptions);

/** A readable sentence for any failed call, never raw JSON. */
export function messageOf(error: unknown): string {
  const folioError = toFolioError(error);
  if (folioError.code === 'UNAUTHORIZED') return 'Your session has ended or the token is not valid. Sign in again.';
  if (folioError.code === 'TOO_MANY_REQUESTS' && folioError.retryAfter) return `${folioError.message} Try again in ${folioError.retryAfter} s.`;
  if (folioError.issues.length > 0) {
    const fields = folioError.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message));
    return `${folioError.message}: ${fields.join('; ')}.`;
  }
  return folioError.message;
}
