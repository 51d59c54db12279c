import { z } from 'zod';
import type { Config } from '../config.ts';
import { sql, type Database } from '../db/database.ts';
import { deferQueueNames } from '../email/email.jobs.ts';
import { BACKLOG_ALARM_DEPTH } from '../benchmark/read-fleet.ts';

/**
 * The specification's monitoring alarms, each with the threshold it names and
 * the window we chose where it names none (README: Alarms). A rate needs a
 * minimum of sends in its window, so one bounce among three sends is no
 * reputation problem.
 */
export const ALARMS = {
  failover_burst: { threshold: 3, windowMinutes: 15, describe: (v: number) => `${v} email failovers in 15 minutes (alarm at 3)` },
  provider_b_bounce_rate: {
    threshold: 0.02,
    windowMinutes: 24 * 60,
    minSends: 100,
    describe: (v: number) => `provider B bounce rate ${(v * 100).toFixed(2)}% over 24 hours (alarm above 2%)`,
  },
  complaint_rate: {
    threshold: 0.0005,
    windowMinutes: 24 * 60,
    minSends: 100,
    describe: (v: number) => `complaint rate ${(v * 100).toFixed(3)}% over 24 hours (alarm above 0.05%)`,
  },
  deferred_dead_letter: { threshold: 0, windowMinutes: 15, describe: (v: number) => `${v} deferred sends dead-lettered in 15 minutes` },
  conversion_dead_letter: { threshold: 0, windowMinutes: 15, describe: (v: number) => `${v} conversion or benchmark jobs failed for good in 15 minutes` },
  queue_backlog: {
    threshold: BACKLOG_ALARM_DEPTH,
    windowMinutes: 0,
    describe: (v: number) => `${v} conversion and benchmark jobs waiting (alarm above ${BACKLOG_ALARM_DEPTH})`,
  },
  api_5xx: { threshold: 0, windowMinutes: 5, describe: (v: number) => `${v} API 5xx answers in 5 minutes` },
} as const;

type AlarmCondition = keyof typeof ALARMS;

export type AlarmReading = { condition: AlarmCondition; value: number; firing: boolean; details: Record<string, number> };

/** Queues whose backlog the pipeline alarm watches (pg-boss names): the conversion queues and the benchmark's pipeline queue. */
const PIPELINE_QUEUES = sql.fragment`(name like 'conversion.%' or name = 'benchmark')`;

const Counts = z.object({
  failovers: z.number(),
  bSends: z.number(),
  bBounces: z.number(),
  sends: z.number(),
  complaints: z.number(),
  apiErrors: z.number(),
});

/**
 * Reads every alarm's input at `now` (the injected clock, so tests move
 * time): the send log for failovers and rates, pg-boss's job table for dead
 * letters and backlog, api_error_minutes for 5xx answers.
 */
export async function readAlarms(deps: { db: Database; config: Config }, now: Date): Promise<AlarmReading[]> {
  const at = sql.fragment`${now.toISOString()}::timestamptz`;
  const day = sql.fragment`${at} - interval '24 hours'`;
  // Sends that reached a provider: suppressed, failed (not accepted) and deferred (not yet) rows are no reputation.
  const reached = sql.fragment`status not in ('suppressed', 'failed', 'deferred') and category <> 'unknown'`;
  const counts = await deps.db.one(sql.type(Counts)`
    select
      (select count(*)::int from email_log where failed_over and created_at > ${at} - interval '15 minutes' and created_at <= ${at}) as failovers,
      (select count(*)::int from email_log where provider = 'provider_b' and ${reached} and created_at > ${day} and created_at <= ${at}) as "bSends",
      (select count(*)::int from email_log where provider = 'provider_b' and status = 'bounced' and created_at > ${day} and created_at <= ${at}) as "bBounces",
      (select count(*)::int from email_log where ${reached} and created_at > ${day} and created_at <= ${at}) as sends,
      (select count(*)::int from email_log where status = 'complained' and created_at > ${day} and created_at <= ${at}) as complaints,
      (select coalesce(sum(errors), 0)::int from api_error_minutes where minute > ${at} - interval '5 minutes' and minute <= ${at}) as "apiErrors"`);
  const deferQueues = deferQueueNames(deps.config);
  const jobs = await deps.db.one(sql.type(z.object({ deadLetters: z.number(), failed: z.number(), backlog: z.number() }))`
    select
      (select count(*)::int from pgboss.job where name = ${deferQueues?.deadLetter ?? ''} and created_on > ${at} - interval '15 minutes' and created_on <= ${at}) as "deadLetters",
      (select count(*)::int from pgboss.job
        where (name like 'conversion.%' and state = 'failed' and completed_on > ${at} - interval '15 minutes' and completed_on <= ${at})
           or (name = 'benchmark.dead-letter' and created_on > ${at} - interval '15 minutes' and created_on <= ${at})) as failed,
      (select count(*)::int from pgboss.job where ${PIPELINE_QUEUES} and state in ('created', 'retry')) as backlog`);
  const rate = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
  const bounceRate = rate(counts.bBounces, counts.bSends);
  const complaintRate = rate(counts.complaints, counts.sends);
  return [
    { condition: 'failover_burst', value: counts.failovers, firing: counts.failovers >= ALARMS.failover_burst.threshold, details: {} },
    {
      condition: 'provider_b_bounce_rate',
      value: bounceRate,
      firing: counts.bSends >= ALARMS.provider_b_bounce_rate.minSends && bounceRate > ALARMS.provider_b_bounce_rate.threshold,
      details: { sends: counts.bSends, bounces: counts.bBounces },
    },
    {
      condition: 'complaint_rate',
      value: complaintRate,
      firing: counts.sends >= ALARMS.complaint_rate.minSends && complaintRate > ALARMS.complaint_rate.threshold,
      details: { sends: counts.sends, complaints: counts.complaints },
    },
    { condition: 'deferred_dead_letter', value: jobs.deadLetters, firing: jobs.deadLetters > 0, details: {} },
    { condition: 'conversion_dead_letter', value: jobs.failed, firing: jobs.failed > 0, details: {} },
    { condition: 'queue_backlog', value: jobs.backlog, firing: jobs.backlog > ALARMS.queue_backlog.threshold, details: {} },
    { condition: 'api_5xx', value: counts.apiErrors, firing: counts.apiErrors > 0, details: {} },
  ];
}
