import type { Deps } from '../../server/deps.ts';
import { ensureOutreachQueue, OUTREACH_QUEUE, OutreachBatchJob } from '../../server/outreach/outreach.jobs.ts';
import { sendOutreachBatch } from '../../server/outreach/send-outreach-batch.ts';
import { resolveSigningSecrets } from '../../server/secrets.ts';

/** Campaign batches, one at a time per process: cold mail has no hurry, and provider B's sending rate is the limit. */
export async function registerOutreachJobs(deps: Deps): Promise<void> {
  await ensureOutreachQueue(deps.boss);
  const outreachDeps = { ...deps, linkSecret: resolveSigningSecrets(deps.config).download };
  await deps.boss.work(OUTREACH_QUEUE, { batchSize: 1, pollingIntervalSeconds: 2 }, async ([job]) => {
    const parsed = OutreachBatchJob.safeParse(job?.data);
    if (!parsed.success) {
      deps.log.error({ jobId: job?.id }, 'outreach batch with a bad payload dropped');
      return;
    }
    const counts = await sendOutreachBatch(outreachDeps, parsed.data);
    deps.log.info({ event: 'outreach_batch', campaignId: parsed.data.campaignId, ...counts }, 'outreach batch sent');
  });
}
