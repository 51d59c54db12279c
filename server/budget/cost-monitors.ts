import type { Deps } from '../deps.ts';
import { formatUsd, startOfHour } from './budget-periods.ts';
import { countCompletedConversions, hourlySpend, setMonitorFiring } from './budget.queries.ts';

export type MonitorDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'log' | 'outOfBand'>;

/** The spike monitor's baseline: the trailing 7 days of hours. */
const BASELINE_HOURS = 7 * 24;
const HOUR_MS = 3_600_000;

export type MonitorResult = { firing: boolean; alerted: boolean; detail: Record<string, number> };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Hour buckets of [from, from + hours h), zeros included. */
async function hourBuckets(deps: MonitorDeps, from: Date, hours: number): Promise<number[]> {
  const buckets = new Array<number>(hours).fill(0);
  for (const row of await hourlySpend(deps.db, from, hours)) buckets[row.hour] = row.usd;
  return buckets;
}

/**
 * Fires a monitor's mail when its condition starts to hold; nothing more
 * while it holds; re-arms when it clears. A mail that does not leave hands the
 * state back, so the next run tries again.
 */
async function transition(
  deps: MonitorDeps,
  name: 'cost_spike' | 'cost_trickle',
  firing: boolean,
  detail: Record<string, number>,
  mail: () => { subject: string; text: string },
) {
  const changed = await setMonitorFiring(deps.db, name, firing, detail);
  if (!changed || !firing) return false;
  const { subject, text } = mail();
  const outcome = await deps.outOfBand.send({ source: name, subject, text, key: `${name}:${deps.clock.now().toISOString()}` });
  if (outcome.ok) return true;
  deps.log.error({ monitor: name, error: outcome.error }, 'cost monitor alert not sent');
  if (outcome.kind !== 'unconfigured') await setMonitorFiring(deps.db, name, false, detail);
  return false;
}

/**
 * Cost spike: the last complete hour's ledger spend above COST_SPIKE_FACTOR
 * times the median of the 168 hours before it (quiet hours count as zero),
 * and at least COST_SPIKE_MIN_USD, so a week of silence does not make the
 * first cent a spike.
 */
export async function checkCostSpike(deps: MonitorDeps): Promise<MonitorResult> {
  const lastHourStart = new Date(startOfHour(deps.clock.now()).getTime() - HOUR_MS);
  const baseline = await hourBuckets(deps, new Date(lastHourStart.getTime() - BASELINE_HOURS * HOUR_MS), BASELINE_HOURS + 1);
  const lastHourUsd = baseline.pop()!;
  const medianUsd = median(baseline);
  const { spikeFactor, spikeMinUsd } = deps.config.budget;
  const firing = lastHourUsd >= spikeMinUsd && lastHourUsd > spikeFactor * medianUsd;
  const detail = { lastHourUsd, medianUsd, factor: spikeFactor };
  const alerted = await transition(deps, 'cost_spike', firing, detail, () => ({
    subject: `Cost spike: ${formatUsd(lastHourUsd)} of model spend in the last hour`,
    text: `Model spend in the hour from ${lastHourStart.toISOString()} was ${formatUsd(lastHourUsd)}, over ${spikeFactor}× the trailing 7-day hourly median (${formatUsd(medianUsd)}).`,
  }));
  return { firing, alerted, detail };
}

/**
 * Cost trickle: ledger spend in every one of the last COST_TRICKLE_HOURS
 * complete hours and no conversion completed in them: money leaking with
 * nothing to show for it (a retry loop, a stuck chunk).
 */
export async function checkCostTrickle(deps: MonitorDeps): Promise<MonitorResult> {
  const hours = deps.config.budget.trickleHours;
  const end = startOfHour(deps.clock.now());
  const from = new Date(end.getTime() - hours * HOUR_MS);
  const buckets = await hourBuckets(deps, from, hours);
  const spendingHours = buckets.filter((usd) => usd > 0).length;
  const completed = await countCompletedConversions(deps.db, from, end);
  const totalUsd = buckets.reduce((sum, usd) => sum + usd, 0);
  const firing = spendingHours === hours && completed === 0;
  const detail = { hours, spendingHours, completed, totalUsd };
  const alerted = await transition(deps, 'cost_trickle', firing, detail, () => ({
    subject: `Cost trickle: model spend every hour for ${hours} hours, no conversion completed`,
    text: `Model spend was booked in each of the ${hours} hours from ${from.toISOString()} to ${end.toISOString()} (${formatUsd(totalUsd)} in all) and no conversion completed. Look for a retry loop or a stuck job.`,
  }));
  return { firing, alerted, detail };
}
