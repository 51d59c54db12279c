import { signLinkToken } from '../auth/signed-link.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { escapeHtml } from '../sharing/html.ts';
import { publicUrl } from '../public-url.ts';
import type { OutreachBatchJob } from './outreach.jobs.ts';
import { claimDelivery, findCampaign, finishDelivery, optOutReason } from './outreach.queries.ts';

export type OutreachDeps = Pick<Deps, 'db' | 'config' | 'clock' | 'log'> & { email: EmailService; linkSecret: string };

/** The one-click unsubscribe link of an address: it never expires and works however often it is used. */
export function unsubscribeUrl(deps: Pick<OutreachDeps, 'config' | 'linkSecret'>, email: string): string {
  return publicUrl(deps.config, `/api/unsubscribe?token=${encodeURIComponent(signLinkToken(deps.linkSecret, 'unsubscribe', email))}`);
}

/**
 * Sends one batch of a campaign, one email per address: pinned to provider B
 * (cold-mail bounces never touch provider A's transactional reputation) in
 * the outreach configuration set (its events never alert but still
 * suppress), category marketing, tagged with the campaign, with one-click
 * List-Unsubscribe headers. Unsubscribed, bounced and complained addresses
 * are skipped; every address is claimed first, so a batch run twice mails
 * nobody twice.
 */
export async function sendOutreachBatch(deps: OutreachDeps, job: OutreachBatchJob): Promise<Record<string, number>> {
  const campaign = await findCampaign(deps.db, job.campaignId);
  const counts: Record<string, number> = {};
  if (!campaign) return counts;
  const count = (status: string) => {
    counts[status] = (counts[status] ?? 0) + 1;
  };
  for (const email of job.emails) {
    if ((await claimDelivery(deps.db, campaign.id, email)) === 'taken') {
      count('taken');
      continue;
    }
    const at = deps.clock.now();
    const optedOut = await optOutReason(deps.db, email);
    if (optedOut) {
      await finishDelivery(deps.db, { campaignId: campaign.id, campaignName: campaign.name, email, status: 'skipped', error: optedOut, at });
      count('skipped');
      continue;
    }
    const unsubscribe = unsubscribeUrl(deps, email);
    const result = await deps.email.send({
      provider: 'provider_b',
      cloudConfigurationSet: deps.config.email.providerB.outreachConfigurationSet,
      category: 'marketing',
      source: `outreach:${campaign.name}`,
      tags: [{ name: 'campaign', value: campaign.name }],
      idempotencyKey: `outreach:${campaign.id}:${email}`,
      to: email,
      subject: campaign.subject,
      ...(campaign.text !== null ? { text: `${campaign.text}\n\nUnsubscribe: ${unsubscribe}` } : {}),
      ...(campaign.html !== null ? { html: `${campaign.html}<p><a href="${escapeHtml(unsubscribe)}">Unsubscribe</a></p>` } : {}),
      headers: { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    });
    await finishDelivery(deps.db, {
      campaignId: campaign.id,
      campaignName: campaign.name,
      email,
      status: result.status,
      providerMessageId: result.status === 'sent' ? result.providerMessageId : undefined,
      error: result.ok ? undefined : result.error,
      at,
    });
    count(result.status);
  }
  return counts;
}
