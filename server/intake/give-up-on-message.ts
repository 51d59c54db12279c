import type { IntakeDeps } from './intake-deps.ts';
import { IntakeJob } from './intake.jobs.ts';
import { moveIntakeMessage } from './intake.queries.ts';

/**
 * A message (or its finishing) that failed every receive: it is marked
 * `failed` and logged for an operator, and nobody is mailed. A message that
 * crashes its handler three times is broken or hostile; answering it again
 * would only risk a loop. Its raw bytes stay in the store for inspection.
 */
export async function giveUpOnMessage(deps: Pick<IntakeDeps, 'db' | 'log'>, data: unknown): Promise<void> {
  const parsed = IntakeJob.safeParse(data);
  if (!parsed.success) {
    deps.log.error({ event: 'intake_dead_letter' }, 'intake: an unreadable job reached the dead-letter queue');
    return;
  }
  const moved = await moveIntakeMessage(deps.db, parsed.data.messageId, ['received', 'converting', 'finishing'], 'failed', { outcome: 'dead_letter' });
  deps.log.error({ event: 'intake_dead_letter', intakeMessageId: parsed.data.messageId, moved }, 'intake: gave up on a message after every retry');
}
