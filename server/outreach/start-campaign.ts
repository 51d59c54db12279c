import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { enqueueOutreachBatches } from './outreach.jobs.ts';

/** Prospects per campaign call: a larger list is several campaigns (or calls), each bounded in rows and jobs. */
const MAX_CAMPAIGN_RECIPIENTS = 10_000;

export const StartCampaignInput = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (it becomes a provider tag)'),
    subject: z.string().trim().min(1).max(300),
    html: z.string().max(200_000).optional(),
    text: z.string().max(100_000).optional(),
    recipients: z.array(z.email().max(320)).min(1).max(MAX_CAMPAIGN_RECIPIENTS),
  })
  .refine((input) => input.html !== undefined || input.text !== undefined, { message: 'html or text is required', path: ['html'] });
export type StartCampaignInput = z.infer<typeof StartCampaignInput>;

export const StartedCampaign = z.object({ campaignId: z.uuid(), recipients: z.number().int(), batches: z.number().int() });

/**
 * POST /api/admin/outreach/campaigns: the campaign, one queued delivery row
 * per distinct address and the batch jobs commit together; the batches send
 * over provider B in the outreach configuration set (send-outreach-batch.ts).
 */
export async function startCampaign(deps: Pick<Deps, 'db' | 'boss'>, admin: { id: string }, input: StartCampaignInput) {
  const emails = [...new Set(input.recipients.map((address) => address.trim().toLowerCase()))];
  return deps.db.transaction(async (tx) => {
    const campaignId = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into outreach_campaigns (name, subject, html, text, created_by, recipients)
      values (${input.name}, ${input.subject}, ${input.html ?? null}, ${input.text ?? null}, ${admin.id}, ${emails.length}) returning id`);
    await tx.query(sql.type(AnyRow)`
      insert into outreach_deliveries (campaign_id, email) select ${campaignId}, unnest(${sql.array(emails, 'text')})`);
    const batches = await enqueueOutreachBatches(deps.boss, tx, campaignId, emails);
    return { campaignId, recipients: emails.length, batches };
  });
}
