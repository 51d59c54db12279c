import type { Readable } from 'node:stream';
import { verifyLinkToken } from '../auth/signed-link.ts';
import type { Deps } from '../deps.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { findLiveShare } from './sharing.queries.ts';

/**
 * The shared HTML behind a share link: undefined for a wrong, tampered or
 * expired token, a share whose file was deleted, or HTML no longer stored.
 */
export async function openSharedHtml(
  deps: Pick<Deps, 'db' | 'clock'> & { store: ObjectStore; linkSecret: string },
  token: string,
): Promise<Readable | undefined> {
  const now = deps.clock.now();
  const shareId = verifyLinkToken(deps.linkSecret, 'share', token, now);
  if (!shareId || !/^[0-9a-f-]{36}$/.test(shareId)) return undefined;
  const share = await findLiveShare(deps.db, shareId, now);
  if (!share || !(await deps.store.exists(share.htmlKey))) return undefined;
  return deps.store.get(share.htmlKey);
}
