import { desiredInstances, FLEET_RULE } from './fleet-rule.ts';

/**
 * A day of benchmark traffic replayed against the autoscaling rule, so the
 * rule can be judged: how long pipelines wait in the queue, and how many
 * instance-minutes the fleet costs. Deterministic for a seed. Time moves in
 * 10-second ticks; the autoscaler looks once a minute; a new instance takes
 * 2 to 3 minutes to boot (the specification's cold start) and runs one
 * pipeline at a time. A shrinking fleet stops idle or booting instances
 * first; a busy one that must go gives its pipeline back to the queue (the
 * spot interruption path).
 */

const TICK_S = 10;
const DAY_S = 24 * 60 * 60;

export type FleetPolicy = { kind: 'rule' } | { kind: 'fixed'; instances: number };

export type SimulationResult = {
  policy: string;
  sessions: number;
  pipelines: number;
  waitP50Minutes: number;
  waitP99Minutes: number;
  waitMaxMinutes: number;
  instanceMinutes: number;
  maxInstances: number;
  scaleChanges: number;
  /** the shortest time between two size changes, minutes (the cooldown keeps it at 5 or more) */
  minMinutesBetweenChanges: number;
  unfinished: number;
};

/** mulberry32: small, fast, and the same sequence for a seed on every machine. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sessions per minute over the day: near nothing at night, a working-day
 * hump peaking in the afternoon, and a burst at 10:00 (a team benchmarking a
 * batch of files), which is what pushes the queue past 10 and 50.
 */
function arrivalRate(second: number): number {
  const hour = second / 3600;
  const workingDay = hour >= 8 && hour < 19 ? 0.35 * Math.sin((Math.PI * (hour - 8)) / 11) : 0;
  const burst = hour >= 10 && hour < 10 + 5 / 60 ? 6 : 0;
  return 0.01 + workingDay + burst;
}

/** Minutes a pipeline runs: mostly the local backend (a minute or so), some vision (several minutes), some parser. */
function serviceMinutes(next: () => number): number {
  const kind = next();
  if (kind < 0.6) return 0.5 + next();
  if (kind < 0.85) return 1 + 2 * next();
  return 3 + 3 * next();
}

type Pipeline = { enqueuedAt: number; serviceS: number; startedAt?: number };
type Instance = { launchedAt: number; readyAt: number; busyUntil?: number; job?: Pipeline };

export function simulateFleet(options: { seed?: number; policy?: FleetPolicy } = {}): SimulationResult {
  const next = random(options.seed ?? 1);
  const policy = options.policy ?? { kind: 'rule' };
  const queue: Pipeline[] = [];
  const waits: number[] = [];
  const instances: Instance[] = [];
  let sessions = 0;
  let pipelines = 0;
  let instanceSeconds = 0;
  let maxInstances = 0;
  let lastScaledAt: number | undefined;
  const changes: number[] = [];

  const launch = (now: number) => instances.push({ launchedAt: now, readyAt: now + 120 + Math.floor(next() * 61) });
  if (policy.kind === 'fixed') for (let index = 0; index < policy.instances; index++) instances.push({ launchedAt: 0, readyAt: 0 });

  // the day, then as long as it takes to drain what arrived (bounded: a fleet of 0 never drains)
  for (let now = 0; now < DAY_S + 6 * 3600; now += TICK_S) {
    if (now < DAY_S) {
      const expected = (arrivalRate(now) * TICK_S) / 60;
      // Poisson arrivals in the tick, by inversion
      let arrivals = 0;
      for (let p = Math.exp(-expected), sum = p, u = next(); u > sum; arrivals++) {
        p *= expected / (arrivals + 1);
        sum += p;
      }
      for (let session = 0; session < arrivals; session++) {
        sessions++;
        const count = 1 + Math.floor(next() * 3);
        for (let index = 0; index < count; index++) {
          pipelines++;
          queue.push({ enqueuedAt: now, serviceS: Math.round(serviceMinutes(next) * 60) });
        }
      }
    }
    for (const instance of instances) {
      if (instance.job && instance.busyUntil! <= now) {
        instance.job = undefined;
        instance.busyUntil = undefined;
      }
      if (!instance.job && instance.readyAt <= now && queue.length > 0) {
        const job = queue.shift()!;
        job.startedAt = now;
        waits.push(now - job.enqueuedAt);
        instance.job = job;
        instance.busyUntil = now + job.serviceS;
      }
    }
    if (policy.kind === 'rule' && now % 60 === 0) {
      const depth = queue.length + instances.filter((instance) => instance.job).length;
      const decision = desiredInstances({
        depth,
        current: instances.length,
        lastScaledAt: lastScaledAt === undefined ? undefined : new Date(lastScaledAt * 1000),
        now: new Date(now * 1000),
      });
      if (decision.desired !== instances.length) {
        while (instances.length < decision.desired) launch(now);
        while (instances.length > decision.desired) {
          // idle first, then booting, then busy (its pipeline goes back to the head of the queue)
          const order = [...instances].sort((a, b) => Number(Boolean(a.job)) - Number(Boolean(b.job)) || b.readyAt - a.readyAt);
          const victim = order[0]!;
          if (victim.job) {
            waits.splice(waits.indexOf(victim.job.startedAt! - victim.job.enqueuedAt), 1);
            queue.unshift({ enqueuedAt: victim.job.enqueuedAt, serviceS: victim.job.serviceS });
          }
          instances.splice(instances.indexOf(victim), 1);
        }
        lastScaledAt = now;
        changes.push(now);
      }
    }
    instanceSeconds += instances.length * TICK_S;
    maxInstances = Math.max(maxInstances, instances.length);
    if (now >= DAY_S && queue.length === 0 && instances.every((instance) => !instance.job) && (policy.kind === 'fixed' || instances.length === 0)) break;
  }

  const sorted = [...waits].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! / 60 : 0);
  const gaps = changes.slice(1).map((time, index) => (time - changes[index]!) / 60);
  return {
    policy: policy.kind === 'rule' ? `rule (0/1/2/4, cooldown ${FLEET_RULE.cooldownMs / 60_000} min)` : `fixed ${policy.instances}`,
    sessions,
    pipelines,
    waitP50Minutes: at(0.5),
    waitP99Minutes: at(0.99),
    waitMaxMinutes: at(1),
    instanceMinutes: Math.round(instanceSeconds / 60),
    maxInstances,
    scaleChanges: changes.length,
    minMinutesBetweenChanges: gaps.length ? Math.min(...gaps) : Number.POSITIVE_INFINITY,
    unfinished: pipelines - waits.length,
  };
}
