/**
 * The spot fleet's autoscaling rule (specification, limits: "Spot fleet"):
 * 0 to 4 instances; queue depth 0 gives 0, 1 or more gives 1, 10 or more
 * gives 2, 50 or more gives 4; cooldown 5 minutes. Pure, so the API, the
 * simulation and the tests run the same rule.
 */
export const FLEET_RULE = {
  /** depth thresholds, highest first: the first one reached decides */
  steps: [
    { minDepth: 50, instances: 4 },
    { minDepth: 10, instances: 2 },
    { minDepth: 1, instances: 1 },
  ],
  maxInstances: 4,
  cooldownMs: 5 * 60 * 1000,
} as const;

/** The instance count the depth alone asks for. */
export function targetInstances(depth: number): number {
  const step = FLEET_RULE.steps.find((candidate) => depth >= candidate.minDepth);
  return Math.min(FLEET_RULE.maxInstances, step?.instances ?? 0);
}

export type FleetState = {
  depth: number;
  /** instances the fleet has now (running or booting) */
  current: number;
  /** when the fleet last changed size; undefined when it never did */
  lastScaledAt?: Date;
  now: Date;
};

export type FleetDecision = { target: number; desired: number; cooldownRemainingMs: number };

/**
 * What the fleet should be now. A change, up or down, waits until 5 minutes
 * have passed since the last one (at exactly 5 minutes it may change); inside
 * the cooldown the fleet keeps its size.
 */
export function desiredInstances(state: FleetState): FleetDecision {
  const target = targetInstances(state.depth);
  const current = Math.min(FLEET_RULE.maxInstances, Math.max(0, state.current));
  if (target === current) return { target, desired: current, cooldownRemainingMs: 0 };
  const elapsed = state.lastScaledAt ? state.now.getTime() - state.lastScaledAt.getTime() : Number.POSITIVE_INFINITY;
  if (elapsed < FLEET_RULE.cooldownMs) return { target, desired: current, cooldownRemainingMs: FLEET_RULE.cooldownMs - elapsed };
  return { target, desired: target, cooldownRemainingMs: 0 };
}
