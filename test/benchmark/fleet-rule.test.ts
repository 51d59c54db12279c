import { describe, expect, it } from 'vitest';
import { desiredInstances, FLEET_RULE, targetInstances } from '../../server/benchmark/fleet-rule.ts';

const MINUTE = 60_000;
const now = new Date('2026-11-26T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

describe('targetInstances', () => {
  it.each([
    [0, 0],
    [1, 1],
    [9, 1],
    [10, 2],
    [49, 2],
    [50, 4],
    [51, 4],
    [10_000, 4],
  ])('depth %i asks for %i instances', (depth, instances) => {
    expect(targetInstances(depth)).toBe(instances);
  });

  it('never asks for more than the maximum of 4', () => {
    expect(FLEET_RULE.maxInstances).toBe(4);
    expect(Math.max(...[0, 1, 10, 50, 1e9].map(targetInstances))).toBe(4);
  });
});

describe('desiredInstances', () => {
  it('scales at once when the fleet never changed size', () => {
    expect(desiredInstances({ depth: 1, current: 0, now })).toEqual({ target: 1, desired: 1, cooldownRemainingMs: 0 });
    expect(desiredInstances({ depth: 50, current: 0, now })).toEqual({ target: 4, desired: 4, cooldownRemainingMs: 0 });
  });

  it.each([
    ['up', 10, 1, 2],
    ['down', 0, 2, 0],
  ])('holds a scale-%s inside the 5-minute cooldown and makes it at exactly 5 minutes', (_direction, depth, current, target) => {
    expect(desiredInstances({ depth, current, lastScaledAt: ago(5 * MINUTE - 1), now })).toEqual({ target, desired: current, cooldownRemainingMs: 1 });
    expect(desiredInstances({ depth, current, lastScaledAt: ago(5 * MINUTE), now })).toEqual({ target, desired: target, cooldownRemainingMs: 0 });
    expect(desiredInstances({ depth, current, lastScaledAt: ago(5 * MINUTE + 1), now })).toEqual({ target, desired: target, cooldownRemainingMs: 0 });
  });

  it('reports no cooldown when the fleet already has the size the rule asks for', () => {
    expect(desiredInstances({ depth: 12, current: 2, lastScaledAt: ago(MINUTE), now })).toEqual({ target: 2, desired: 2, cooldownRemainingMs: 0 });
  });

  it('keeps a fleet reported above the maximum at 4', () => {
    expect(desiredInstances({ depth: 60, current: 7, lastScaledAt: ago(MINUTE), now }).desired).toBe(4);
  });
});
