import { createCloudAlarmProbe } from '../benchmark/cloud-alarms.ts';
import { ALARMS } from '../alarms/alarm-conditions.ts';
import { openEpisodes } from '../alarms/alarms.queries.ts';
import type { RawRouteMount } from './index.ts';

/**
 * GET /metrics in Prometheus text format. The queue backlog gauge is read
 * from pg-boss at scrape time (queued = created + retry, not yet active), so
 * it is true whichever process runs the workers; so is the alarm gauge, read
 * from the open alarm episodes.
 */
export const mountMetricsRoute: RawRouteMount = (app, deps) => {
  const probeCloudAlarms = createCloudAlarmProbe();
  app.get('/metrics', async (_req, res) => {
    try {
      const queues = await deps.boss.getQueues();
      deps.metrics.queueBacklog.reset();
      for (const queue of queues) deps.metrics.queueBacklog.set({ queue: queue.name }, queue.queuedCount);
    } catch (error) {
      deps.log.warn({ err: error }, 'queue backlog not readable for /metrics');
    }
    await probeCloudAlarms(deps).catch((error: unknown) => deps.log.warn({ err: error }, 'cloud alarms not readable for /metrics'));
    try {
      const open = new Set((await openEpisodes(deps.db)).map((episode) => episode.condition));
      for (const condition of Object.keys(ALARMS)) deps.metrics.alarmFiring.set({ condition }, open.has(condition) ? 1 : 0);
    } catch (error) {
      deps.log.warn({ err: error }, 'alarm episodes not readable for /metrics');
    }
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
};
