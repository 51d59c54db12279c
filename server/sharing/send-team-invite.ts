import type { EmailService } from '../email/email-service.ts';
import type { SendStatus } from '../email/types.ts';
import { escapeHtml } from './html.ts';

export type TeamInviteInput = { teamName: string; invitedBy: string; inviteeEmail: string; acceptUrl: string };

/** `inviteSent` is true only when the library says `ok`: the caller must not tell the admin "sent" otherwise. */
export type TeamInviteResult = { inviteSent: boolean; status: SendStatus; error?: string };

export async function sendTeamInvite(email: EmailService, input: TeamInviteInput): Promise<TeamInviteResult> {
  const result = await email.send({
    category: 'transactional',
    source: 'api:team-invite',
    to: input.inviteeEmail,
    subject: `${input.invitedBy} invited you to ${input.teamName} on Folio`,
    text: `${input.invitedBy} invited you to join ${input.teamName} on Folio.\n\nAccept the invitation: ${input.acceptUrl}`,
    html: `<p>${escapeHtml(input.invitedBy)} invited you to join ${escapeHtml(input.teamName)} on Folio.</p><p><a href="${escapeHtml(input.acceptUrl)}">Accept the invitation</a></p>`,
  });
  return result.ok ? { inviteSent: true, status: result.status } : { inviteSent: false, status: result.status, error: result.error };
}
