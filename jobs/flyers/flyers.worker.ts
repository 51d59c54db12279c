import type { Deps } from '../../server/deps.ts';
import { ensureFlyerQueue, FLYER_QUEUE, FlyerJobData } from '../../server/flyers/flyers.jobs.ts';
import { runFlyer } from '../../server/flyers/request-flyer.ts';

/** Preserve Formatting renders, one at a time per process (short documents, the page parse on this thread). */
export async function registerFlyerJobs(deps: Deps): Promise<void> {
  await ensureFlyerQueue(deps.boss);
  await deps.boss.work(FLYER_QUEUE, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
    const parsed = FlyerJobData.safeParse(job?.data);
    if (!parsed.success) {
      deps.log.error({ jobId: job?.id }, 'flyer job with a bad payload dropped');
      return;
    }
    await runFlyer(deps, parsed.data.flyerJobId);
  });
}
