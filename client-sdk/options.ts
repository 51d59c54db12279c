export type FolioClientOptions = {
  /** where Folio runs, e.g. http://localhost:3000; '' in a page Folio itself serves */
  baseUrl: string;
  /** a Bearer session token, or a function giving the current one */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  fetch?: typeof fetch;
};

export function apiUrl(options: Pick<FolioClientOptions, 'baseUrl'>, path: string): string {
  return `${options.baseUrl.replace(/\/+$/, '')}${path}`;
}

export async function authHeaders(options: FolioClientOptions): Promise<Record<string, string>> {
  const token = typeof options.token === 'function' ? await options.token() : options.token;
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** A link Folio gave out (download, HTML, figure picture, benchmark output) made absolute against baseUrl; absolute links pass through. */
export function absoluteUrl(options: Pick<FolioClientOptions, 'baseUrl'>, url: string): string {
  return /^https?:/i.test(url) ? url : apiUrl(options, url);
}
