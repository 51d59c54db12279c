import { simulateFleet } from '../server/benchmark/simulate-fleet.ts';

/**
 * `npm run simulate:fleet [-- --seed N]`: a day of benchmark arrivals against
 * the autoscaling rule, beside fixed fleets of 1 and 4 instances for scale:
 * queue wait p50/p99/max and instance-minutes.
 */
const seedArg = process.argv.indexOf('--seed');
const seed = seedArg > 0 ? Number(process.argv[seedArg + 1]) : 1;
if (!Number.isInteger(seed)) {
  console.error('--seed takes an integer');
  process.exit(2);
}
const runs = [
  simulateFleet({ seed }),
  simulateFleet({ seed, policy: { kind: 'fixed', instances: 1 } }),
  simulateFleet({ seed, policy: { kind: 'fixed', instances: 4 } }),
];
console.log(`seed ${seed}: ${runs[0]!.sessions} sessions, ${runs[0]!.pipelines} pipelines in a day; cold start 2-3 min; one pipeline per instance at a time`);
console.table(
  runs.map((run) => ({
    policy: run.policy,
    'wait p50 (min)': Number(run.waitP50Minutes.toFixed(2)),
    'wait p99 (min)': Number(run.waitP99Minutes.toFixed(2)),
    'wait max (min)': Number(run.waitMaxMinutes.toFixed(2)),
    'instance-minutes': run.instanceMinutes,
    'max instances': run.maxInstances,
    'size changes': run.scaleChanges,
    unfinished: run.unfinished,
  })),
);
