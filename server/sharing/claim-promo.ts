import { signSessionToken } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import type { SendStatus } from '../email/types.ts';
import { DomainError } from '../errors.ts';
import { publicUrl } from '../public-url.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import { escapeHtml } from './html.ts';
import { findPromo, recordPromoClaim } from './sharing.queries.ts';

const HOUR_MS = 60 * 60 * 1000;
/** Links one inbox gets in an hour: a typo and a retry, not a flood. */
const PROMO_MAILS_PER_ADDRESS_HOUR = 3;
/** Claims one address (IP) makes in an hour, whatever inboxes it names: an office behind one NAT still fits. */
const PROMO_CLAIMS_PER_IP_HOUR = 20;

/** A magic link is a sign-in credential in an inbox: keep it short-lived. */
const MAGIC_LINK_TTL_SECONDS = 60 * 60;

export type PromoClaimResult = { ok: boolean; status: SendStatus | 'unavailable'; message: string };

const SENT_MESSAGE = 'Check your inbox: we emailed you a sign-in link.';
const UNSENT_MESSAGE = 'We could not email you a sign-in link. Please request a sign-in link yourself from the sign-in page.';

/**
 * POST /api/promo/:promoSlug/claim: mails a magic sign-in link for the promo
 * through the library (category `auth`). When the email did not go out
 * (suppressed, failed, or no signing key to mint a link) the answer says so
 * and asks the user to request a link themselves; it never claims "sent".
 */
export async function claimPromo(
  deps: Pick<Deps, 'db' | 'config' | 'clock'> & { email: EmailService },
  input: { promoSlug: string; email: string; ip: string },
): Promise<PromoClaimResult> {
  const promo = await findPromo(deps.db, input.promoSlug);
  if (!promo?.active || (promo.expiresAt && promo.expiresAt <= deps.clock.now())) throw new DomainError('NOT_FOUND', 'Promo not found');
  const address = input.email.trim().toLowerCase();
  // anyone may call this without signing in: without limits it mails any inbox as often as asked
  await enforceRateLimits(
    deps.db,
    [
      { key: `promo:email:${address}`, limit: PROMO_MAILS_PER_ADDRESS_HOUR, windowMs: HOUR_MS },
      { key: `promo:ip:${input.ip}`, limit: PROMO_CLAIMS_PER_IP_HOUR, windowMs: HOUR_MS },
    ],
    deps.clock.now(),
    'Too many sign-in links asked for; try again later',
  );

  const secret = resolveSigningSecrets(deps.config).jwt;
  if (!secret) return { ok: false, status: 'unavailable', message: UNSENT_MESSAGE };
  const token = await signSessionToken(secret, { subject: `email:${address}`, email: address }, { expiresIn: MAGIC_LINK_TTL_SECONDS, now: deps.clock.now() });
  const link = publicUrl(deps.config, `/promo/${encodeURIComponent(promo.slug)}?token=${encodeURIComponent(token)}`);

  const result = await deps.email.send({
    category: 'auth',
    source: 'api:promo-claim',
    tags: [{ name: 'promo', value: promo.slug }],
    to: address,
    subject: `Your sign-in link for ${promo.title}`,
    text: `Sign in to claim ${promo.title}: ${link}\n\nThe link works for one hour. If you did not ask for it, ignore this email.`,
    html: `<p><a href="${escapeHtml(link)}">Sign in to claim ${escapeHtml(promo.title)}</a></p><p>The link works for one hour. If you did not ask for it, ignore this email.</p>`,
  });
  await recordPromoClaim(deps.db, { slug: promo.slug, email: address, status: result.status, logId: result.id });
  return { ok: result.ok, status: result.status, message: result.ok ? SENT_MESSAGE : UNSENT_MESSAGE };
}
