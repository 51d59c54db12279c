import { AcceptInviteInput, AcceptInviteResult, acceptTeamInvite, InviteInput, InviteResult, inviteTeamMember } from '../sharing/invite-team-member.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { ShareFileInput, ShareFileResult, shareFile } from '../sharing/share-file.ts';
import { router, tenantAdminProcedure, userProcedure } from '../trpc/trpc.ts';

export const sharingRouter = router({
  shareFile: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/files/{fileId}/share',
        tags: ['sharing'],
        summary: 'Mail a link to the accessible HTML of a converted file (owner only)',
        description:
          'At most 20 recipients. `recipients` counts only the emails that went out; the others are in `unsentRecipients` with their status (suppressed, failed) and reason. 404 for a file that is not yours, 409 CONFLICT when it is not converted, 429 after 10 shares in an hour.',
        protect: true,
      },
    })
    .input(ShareFileInput)
    .output(ShareFileResult)
    .mutation(({ ctx, input }) =>
      shareFile({ ...ctx.deps, email: ctx.deps.email, store: ctx.deps.store, linkSecret: resolveSigningSecrets(ctx.deps.config).download }, ctx.user, input),
    ),

  inviteTeamMember: tenantAdminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/team/invites',
        tags: ['sharing'],
        summary: 'Invite an address to your team (tenant admins)',
        description:
          'Mails a signed link valid 7 days. `inviteSent` is true only when the email went out. 409 CONFLICT when the address is already a member; 429 after 50 invites in an hour.',
        protect: true,
      },
    })
    .input(InviteInput)
    .output(InviteResult)
    .mutation(({ ctx, input }) =>
      inviteTeamMember(
        { ...ctx.deps, email: ctx.deps.email, linkSecret: resolveSigningSecrets(ctx.deps.config).download },
        { id: ctx.user.id, email: ctx.user.email, tenantId: ctx.tenantId },
        input,
      ),
    ),

  acceptTeamInvite: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/team/invites/accept',
        tags: ['sharing'],
        summary: "Join the team of an invite link's token",
        description:
          '404 when the link is not valid or has expired, 403 when it was sent to another address than the signed-in user, 409 when already accepted by someone else or the user belongs to another team.',
        protect: true,
      },
    })
    .input(AcceptInviteInput)
    .output(AcceptInviteResult)
    .mutation(({ ctx, input }) => acceptTeamInvite({ ...ctx.deps, linkSecret: resolveSigningSecrets(ctx.deps.config).download }, ctx.user, input.token)),
});
