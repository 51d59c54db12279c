import type { Deps } from '../deps.ts';
import { createConversionEvents } from '../conversion-jobs/events.ts';
import { wakeWorkers } from '../queue/boss.ts';
import { enqueueIntakeFinish, INTAKE_FINISH_QUEUE } from './intake.jobs.ts';
import { endedConversions } from './intake.queries.ts';

/** Notices the conversion service sends on the commit that ends a job (runner, cancel_conversion_job). */
const ENDING_EVENTS = new Set(['completed', 'failed', 'cancelled']);

/**
 * How the intake hears that a mailed PDF's conversion ended, without a line
 * changed in the conversion service: the service already NOTIFYs on the
 * commit that completes, fails or cancels a job (its SSE listener uses the
 * same channel). Each process subscribes to the files it started and queues
 * the finishing job at once; a notice missed while no process listened is
 * caught by `sweepEndedConversions`, a pg-boss schedule every minute.
 */
export function createConversionWatch(deps: Pick<Deps, 'databaseUrl' | 'log' | 'boss'>) {
  const events = createConversionEvents(deps.databaseUrl, deps.log);
  const watching = new Map<string, () => void>();

  return {
    /** Resolves once the subscription is live, so a conversion started after it cannot end unheard. */
    async watch(messageId: string, fileId: string): Promise<void> {
      if (watching.has(fileId)) return;
      const unsubscribe = await events.subscribe(fileId, (notice) => {
        // 'resync' follows a dropped connection: a notice may have been missed, so look.
        if (!ENDING_EVENTS.has(notice.event) && notice.event !== 'resync') return;
        if (ENDING_EVENTS.has(notice.event)) {
          watching.get(fileId)?.();
          watching.delete(fileId);
        }
        enqueueIntakeFinish(deps.boss, messageId).then(
          () => wakeWorkers(deps.boss, [INTAKE_FINISH_QUEUE]),
          (error: unknown) => deps.log.warn({ err: error, intakeMessageId: messageId }, 'intake: could not queue the finish; the sweep will'),
        );
      });
      watching.set(fileId, unsubscribe);
    },
    close(): void {
      for (const unsubscribe of watching.values()) unsubscribe();
      watching.clear();
    },
  };
}

/** The sweep: every message still waiting on a conversion that has ended gets its finishing job. */
export async function sweepEndedConversions(deps: Pick<Deps, 'db' | 'boss' | 'log'>): Promise<number> {
  const ids = await endedConversions(deps.db);
  for (const id of ids) await enqueueIntakeFinish(deps.boss, id);
  if (ids.length > 0) deps.log.info({ event: 'intake_sweep', messages: ids.length }, 'intake: finishing conversions that ended unheard');
  return ids.length;
}
