import type { Deps } from '../deps.ts';
import { createConversionEndWatch } from '../conversion-jobs/watch-conversion-ends.ts';
import { wakeWorkers } from '../queue/boss.ts';
import { enqueueIntakeFinish, INTAKE_FINISH_QUEUE } from './intake.jobs.ts';
import { endedConversions } from './intake.queries.ts';

/**
 * How the intake hears that a mailed PDF's conversion ended: each process
 * watches the files it started and queues the finishing job at once; a notice
 * missed while no process listened is caught by `sweepEndedConversions`, a
 * pg-boss schedule every minute.
 */
export function createConversionWatch(deps: Pick<Deps, 'databaseUrl' | 'log' | 'boss'>) {
  const ends = createConversionEndWatch(deps);
  return {
    watch: (messageId: string, fileId: string): Promise<void> =>
      ends.watch(fileId, () =>
        enqueueIntakeFinish(deps.boss, messageId).then(
          () => wakeWorkers(deps.boss, [INTAKE_FINISH_QUEUE]),
          (error: unknown) => deps.log.warn({ err: error, intakeMessageId: messageId }, 'intake: could not queue the finish; the sweep will'),
        ),
      ),
    close: ends.close,
  };
}

/** The sweep: every message still waiting on a conversion that has ended gets its finishing job. */
export async function sweepEndedConversions(deps: Pick<Deps, 'db' | 'boss' | 'log'>): Promise<number> {
  const ids = await endedConversions(deps.db);
  for (const id of ids) await enqueueIntakeFinish(deps.boss, id);
  if (ids.length > 0) deps.log.info({ event: 'intake_sweep', messages: ids.length }, 'intake: finishing conversions that ended unheard');
  return ids.length;
}
