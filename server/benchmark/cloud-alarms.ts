import type { Deps } from '../deps.ts';
import { countRecentDeadLetters, selectQueueDepth } from './benchmark.queries.ts';
import { BACKLOG_ALARM_DEPTH } from './read-fleet.ts';
import { ALARMS } from '../alarms/alarm-conditions.ts';

/** A dead-lettered pipeline keeps its alarm up this long (one hour), enough for a scrape and a page to see it. */
const DEAD_LETTER_WINDOW_SECONDS = 60 * 60;
/** An API 5xx keeps its alarm up for five minutes after the last one. */
const API_5XX_WINDOW_MS = ALARMS.api_5xx.windowMinutes * 60 * 1000;

/**
 * The specification's cloud alarms, as gauges on /metrics: messages in the
 * pipeline dead-letter queue, queue backlog above 50, API 5xx errors. The
 * first two are read from the database, so any API process reports them for
 * the whole fleet; the third follows this process's 5xx counter between
 * scrapes (hence the closure: it remembers the last count seen).
 */
export function createCloudAlarmProbe() {
  let last5xx = 0;
  let last5xxAt = Number.NEGATIVE_INFINITY;
  return async (deps: Pick<Deps, 'db' | 'metrics' | 'clock'>): Promise<void> => {
    const now = deps.clock.now().getTime();
    const count = (await deps.metrics.httpResponses.get()).values.find((value) => value.labels.class === '5xx')?.value ?? 0;
    if (count > last5xx) last5xxAt = now;
    last5xx = count;
    const [depth, deadLetters] = await Promise.all([selectQueueDepth(deps.db), countRecentDeadLetters(deps.db, DEAD_LETTER_WINDOW_SECONDS)]);
    deps.metrics.benchmarkDepth.set({ state: 'queued' }, depth.queued);
    deps.metrics.benchmarkDepth.set({ state: 'running' }, depth.running);
    deps.metrics.cloudAlarms.set({ alarm: 'pipeline_dead_letter' }, deadLetters > 0 ? 1 : 0);
    deps.metrics.cloudAlarms.set({ alarm: 'queue_backlog' }, depth.queued > BACKLOG_ALARM_DEPTH ? 1 : 0);
    deps.metrics.cloudAlarms.set({ alarm: 'api_5xx' }, now - last5xxAt < API_5XX_WINDOW_MS ? 1 : 0);
  };
}
