import { verifyLinkToken } from '../auth/signed-link.ts';
import type { Deps } from '../deps.ts';
import { unsubscribe } from './outreach.queries.ts';

/**
 * One-click unsubscribe (RFC 8058): the address a genuine token names stops
 * getting campaign mail for good. Answers 'unsubscribed' the first time and
 * 'already' after; undefined for a token that is not ours.
 */
export async function unsubscribeAddress(
  deps: Pick<Deps, 'db' | 'clock'> & { linkSecret: string },
  token: unknown,
  source: 'one-click' | 'page',
): Promise<'unsubscribed' | 'already' | undefined> {
  const email = verifyLinkToken(deps.linkSecret, 'unsubscribe', token, deps.clock.now());
  if (!email?.includes('@')) return undefined;
  return (await unsubscribe(deps.db, email.toLowerCase(), source)) ? 'unsubscribed' : 'already';
}

/** Whether a token is genuine, for the confirmation page (which must not unsubscribe by itself: mail scanners open links). */
export function unsubscribeTokenValid(deps: Pick<Deps, 'clock'> & { linkSecret: string }, token: unknown): boolean {
  return verifyLinkToken(deps.linkSecret, 'unsubscribe', token, deps.clock.now())?.includes('@') ?? false;
}
