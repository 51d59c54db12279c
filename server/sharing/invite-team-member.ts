import { z } from 'zod';
import { signLinkToken, verifyLinkToken } from '../auth/signed-link.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { DomainError } from '../errors.ts';
import { publicUrl } from '../public-url.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import { sendTeamInvite } from './send-team-invite.ts';
import { isTenantMember, joinTenantByInvite, lockTeamInvite, recordInviteSend, upsertTeamInvite } from './sharing.queries.ts';

/** An invite link is a key to the team: a week to use it, then the admin invites again. */
const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Invites per tenant per hour; a team grows by a few people at a time. */
const INVITES_PER_HOUR = 50;

export const InviteInput = z.object({ email: z.email().max(320) });
export const InviteResult = z.object({
  inviteId: z.uuid(),
  inviteSent: z.boolean(),
  status: z.enum(['sent', 'deferred', 'suppressed', 'failed']),
  error: z.string().optional(),
  expiresAt: z.string(),
});
export type InviteResult = z.infer<typeof InviteResult>;

type InviteDeps = Pick<Deps, 'db' | 'config' | 'clock'> & { email: EmailService; linkSecret: string };

/**
 * A tenant admin invites an address: the invite row (renewed if one is
 * open), then the email with a signed link that expires with the invite.
 * `inviteSent` is true only when the library says `ok`.
 */
export async function inviteTeamMember(
  deps: InviteDeps,
  admin: { id: string; email: string; tenantId: string },
  input: { email: string },
): Promise<InviteResult> {
  const email = input.email.trim().toLowerCase();
  await enforceRateLimits(deps.db, [{ key: `invite:tenant:${admin.tenantId}`, limit: INVITES_PER_HOUR, windowMs: 60 * 60 * 1000 }], deps.clock.now());
  if (await isTenantMember(deps.db, admin.tenantId, email)) throw new DomainError('CONFLICT', 'That address is already a member of the team');
  const expiresAt = new Date(deps.clock.now().getTime() + INVITE_TTL_MS);
  const invite = await upsertTeamInvite(deps.db, { tenantId: admin.tenantId, email, invitedBy: admin.id, expiresAt });
  const token = signLinkToken(deps.linkSecret, 'team-invite', invite.id, expiresAt);
  const sent = await sendTeamInvite(deps.email, {
    teamName: invite.tenantName,
    invitedBy: admin.email,
    inviteeEmail: email,
    acceptUrl: publicUrl(deps.config, `/team/join?token=${encodeURIComponent(token)}`),
  });
  await recordInviteSend(deps.db, invite.id, sent.status);
  return { inviteId: invite.id, inviteSent: sent.inviteSent, status: sent.status, error: sent.error, expiresAt: expiresAt.toISOString() };
}

export const AcceptInviteInput = z.object({ token: z.string().min(1).max(600) });
export const AcceptInviteResult = z.object({ tenantId: z.uuid(), joined: z.literal(true) });

/**
 * The signed-in user accepts an invite: the link must be genuine and
 * unexpired, the invite open (or already accepted by this same user: a
 * second click is not an error) and addressed to the user's own email. The
 * user joins the tenant; a member of another team must leave it first.
 */
export async function acceptTeamInvite(
  deps: Pick<Deps, 'db' | 'clock'> & { linkSecret: string },
  user: { id: string; email: string; tenantId: string | null },
  token: string,
): Promise<{ tenantId: string; joined: true }> {
  const now = deps.clock.now();
  const inviteId = verifyLinkToken(deps.linkSecret, 'team-invite', token, now);
  if (!inviteId || !z.uuid().safeParse(inviteId).success) throw new DomainError('NOT_FOUND', 'This invite link is not valid or has expired');
  return deps.db.transaction(async (tx) => {
    const invite = await lockTeamInvite(tx, inviteId);
    if (!invite || invite.status === 'revoked' || (invite.status === 'pending' && invite.expiresAt <= now)) {
      throw new DomainError('NOT_FOUND', 'This invite link is not valid or has expired');
    }
    if (invite.email !== user.email.toLowerCase()) throw new DomainError('FORBIDDEN', 'This invite was sent to another address; sign in with that address');
    if (invite.status === 'accepted') {
      if (invite.acceptedBy === user.id && user.tenantId === invite.tenantId) return { tenantId: invite.tenantId, joined: true as const };
      throw new DomainError('CONFLICT', 'This invite was already accepted');
    }
    if (user.tenantId && user.tenantId !== invite.tenantId) throw new DomainError('CONFLICT', 'You already belong to another team');
    await joinTenantByInvite(tx, { inviteId: invite.id, tenantId: invite.tenantId, userId: user.id, at: now });
    return { tenantId: invite.tenantId, joined: true as const };
  });
}
