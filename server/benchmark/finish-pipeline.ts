import { releaseHold, settleHold } from '../credits/credits.ts';
import type { Deps } from '../deps.ts';
import { countTerminal, finishResult, lockSession, markSessionComplete, type PipelineValue } from './benchmark.queries.ts';

export type FinishOutcome = { written: boolean; sessionCompleted: boolean };

/**
 * Writes a pipeline's terminal value (complete or failed) and, when it is
 * the session's last, marks the session complete and settles its credits:
 * pages x completed pipelines, the rest of the hold released. The session
 * row is locked first, so writers of the same session queue up and the one
 * that sees every value terminal is the only one to mark it — exactly once,
 * even when two pipelines finish together. A value already terminal (a
 * duplicate delivery) is left as it is.
 */
export async function finishPipeline(deps: Pick<Deps, 'db'>, input: { sessionId: string; pipeline: number; value: PipelineValue }): Promise<FinishOutcome> {
  return deps.db.transaction(async (tx) => {
    const session = await lockSession(tx, input.sessionId);
    if (!session) return { written: false, sessionCompleted: false };
    if (!(await finishResult(tx, input.sessionId, input.pipeline, input.value))) return { written: false, sessionCompleted: false };
    const counts = await countTerminal(tx, input.sessionId);
    if (counts.terminal < session.pipelineCount || !(await markSessionComplete(tx, input.sessionId))) return { written: true, sessionCompleted: false };
    if (session.holdId) {
      if (counts.completed > 0) await settleHold(tx, session.holdId, session.pages * counts.completed);
      else await releaseHold(tx, session.holdId, 'failed');
    }
    return { written: true, sessionCompleted: true };
  });
}
