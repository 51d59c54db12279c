import type { Deps } from '../deps.ts';
import { selectQueueDepth } from './benchmark.queries.ts';
import { desiredInstances, FLEET_RULE } from './fleet-rule.ts';

/** Backlog above this raises the "queue backlog above 50" alarm. */
export const BACKLOG_ALARM_DEPTH = 50;

/**
 * The fleet as an external autoscaler sees it: the queue depth (pipelines
 * queued plus running), the instance count the rule asks for, and, given the
 * fleet's current size and last change, the count to set now under the
 * 5-minute cooldown. The server keeps no fleet state: the autoscaler owns it.
 */
export async function readFleet(deps: Pick<Deps, 'db' | 'clock'>, input: { current?: number; lastScaledAt?: Date }) {
  const { queued, running } = await selectQueueDepth(deps.db);
  const depth = queued + running;
  const decision = desiredInstances({ depth, current: input.current ?? 0, lastScaledAt: input.lastScaledAt, now: deps.clock.now() });
  return {
    depth,
    queued,
    running,
    target: decision.target,
    desired: decision.desired,
    cooldownRemainingSeconds: Math.ceil(decision.cooldownRemainingMs / 1000),
    cooldownSeconds: FLEET_RULE.cooldownMs / 1000,
    maxInstances: FLEET_RULE.maxInstances,
    backlogAlarm: queued > BACKLOG_ALARM_DEPTH,
  };
}
