import { describe, expect, it } from 'vitest';
import { simulateFleet } from '../../server/benchmark/simulate-fleet.ts';

describe('simulateFleet', () => {
  const rule = simulateFleet({ seed: 3 });

  it('is the same day for the same seed', () => {
    expect(simulateFleet({ seed: 3 })).toEqual(rule);
    expect(simulateFleet({ seed: 4 }).pipelines).not.toBe(rule.pipelines);
  });

  it('serves every pipeline, within 4 instances, never changing size inside the 5-minute cooldown', () => {
    expect(rule.pipelines).toBeGreaterThan(100);
    expect(rule.unfinished).toBe(0);
    expect(rule.maxInstances).toBeLessThanOrEqual(4);
    expect(rule.minMinutesBetweenChanges).toBeGreaterThanOrEqual(5);
  });

  it('sits between one fixed instance and four: waits less than one, costs less than four', () => {
    const one = simulateFleet({ seed: 3, policy: { kind: 'fixed', instances: 1 } });
    const four = simulateFleet({ seed: 3, policy: { kind: 'fixed', instances: 4 } });
    expect(rule.waitP99Minutes).toBeLessThan(one.waitP99Minutes);
    expect(rule.waitP50Minutes).toBeGreaterThanOrEqual(four.waitP50Minutes);
    expect(rule.instanceMinutes).toBeLessThan(four.instanceMinutes);
  });
});
