import { z } from 'zod';
import { DomainError } from '../errors.ts';
import { campaignCounts, CampaignCounts, findCampaign } from '../outreach/outreach.queries.ts';
import { StartCampaignInput, StartedCampaign, startCampaign } from '../outreach/start-campaign.ts';
import { adminProcedure, router } from '../trpc/trpc.ts';

export const outreachRouter = router({
  startCampaign: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/admin/outreach/campaigns',
        tags: ['admin'],
        summary: 'Send a campaign to a list of prospects (admins)',
        description:
          'Body `{name, subject, html?, text?, recipients[]}` (at most 10,000 addresses; name becomes the provider tag). Sent in batches of 50 through pg-boss, pinned to provider B in the outreach configuration set, with one-click List-Unsubscribe; unsubscribed, bounced and complained addresses are skipped.',
      },
    })
    .input(StartCampaignInput)
    .output(StartedCampaign)
    .mutation(({ ctx, input }) => startCampaign(ctx.deps, ctx.user, input)),
  campaign: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/admin/outreach/campaigns/{campaignId}', tags: ['admin'], summary: 'A campaign and its deliveries by status' },
    })
    .input(z.object({ campaignId: z.uuid() }))
    .output(z.object({ campaignId: z.uuid(), name: z.string(), subject: z.string(), deliveries: CampaignCounts }))
    .query(async ({ ctx, input }) => {
      const campaign = await findCampaign(ctx.deps.db, input.campaignId);
      if (!campaign) throw new DomainError('NOT_FOUND', 'Campaign not found');
      return { campaignId: campaign.id, name: campaign.name, subject: campaign.subject, deliveries: await campaignCounts(ctx.deps.db, campaign.id) };
    }),
});
