import { createHmac, timingSafeEqual } from 'node:crypto';

/** Download links live 24 hours from the moment they are issued (specification: zip download). */
const DOWNLOAD_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

function signature(secret: string, fileId: string, expiresAtSeconds: number): Buffer {
  return createHmac('sha256', secret).update(`folio-download:${fileId}:${expiresAtSeconds}`).digest();
}

/** `<expiry seconds>.<base64url HMAC-SHA256 over file id and expiry>`; the file id is bound but not carried. */
export function signDownloadToken(secret: string, fileId: string, now: Date): string {
  const expiresAt = Math.floor((now.getTime() + DOWNLOAD_TOKEN_TTL_MS) / 1000);
  return `${expiresAt}.${signature(secret, fileId, expiresAt).toString('base64url')}`;
}

/** The link a finished conversion's zip is downloaded from, valid 24 hours from now. */
export function downloadUrl(secret: string, fileId: string, now: Date): string {
  return downloadLinks(secret, fileId, now).downloadUrl;
}

/** A finished conversion's two links, signed once: the zip and its HTML to open in a tab. */
export function downloadLinks(secret: string, fileId: string, now: Date): { downloadUrl: string; htmlUrl: string } {
  const token = encodeURIComponent(signDownloadToken(secret, fileId, now));
  return { downloadUrl: `/api/download/${fileId}/zip?token=${token}`, htmlUrl: `/api/download/${fileId}/html?token=${token}` };
}

/** True only for an untampered, unexpired token issued for this file. Never says why not. */
export function verifyDownloadToken(secret: string, fileId: string, token: unknown, now: Date): boolean {
  if (typeof token !== 'string' || token.length > 200) return false;
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return false;
  const expiresAt = Number(match[1]);
  const given = Buffer.from(match[2]!, 'base64url');
  const expected = signature(secret, fileId, expiresAt);
  // Compare first, then check expiry, so timing does not depend on which check fails.
  const valid = given.length === expected.length && timingSafeEqual(given, expected);
  return valid && expiresAt * 1000 > now.getTime();
}
