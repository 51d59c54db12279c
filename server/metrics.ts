import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus counters behind GET /metrics. Each one exists so an alarm of the
 * specification can be computed from it: failovers (3 in 15 minutes),
 * provider-B bounce and complaint rates (> 2%, > 0.05%), deferred dead letters
 * (any), queue backlog (> 50) and API 5xx responses. One registry per app, so
 * tests see only their own counts.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'folio_process_' });
  return {
    registry,
    emailSends: new Counter({
      name: 'folio_email_sends_total',
      help: 'Library sends by provider and final status',
      labelNames: ['provider', 'status'] as const,
      registers: [registry],
    }),
    emailFailovers: new Counter({
      name: 'folio_email_failovers_total',
      help: 'Sends that failed over from one provider to the other',
      labelNames: ['from', 'to'] as const,
      registers: [registry],
    }),
    emailDeferred: new Counter({ name: 'folio_email_deferred_total', help: 'Ambiguous sends queued for a same-key retry', registers: [registry] }),
    emailDeferredDeadLetters: new Counter({
      name: 'folio_email_deferred_dead_letters_total',
      help: 'Deferred sends that reached the dead-letter queue',
      registers: [registry],
    }),
    emailEvents: new Counter({
      name: 'folio_email_events_total',
      help: 'Delivery events recorded, by provider and log event',
      labelNames: ['provider', 'event'] as const,
      registers: [registry],
    }),
    alerts: new Counter({ name: 'folio_admin_alerts_total', help: 'Admin alert dispatches by result', labelNames: ['result'] as const, registers: [registry] }),
    httpResponses: new Counter({
      name: 'folio_http_responses_total',
      help: 'HTTP responses by status class',
      labelNames: ['class'] as const,
      registers: [registry],
    }),
    queueBacklog: new Gauge({ name: 'folio_queue_backlog', help: 'Queued jobs waiting, by queue', labelNames: ['queue'] as const, registers: [registry] }),
    benchmarkDeadLetters: new Counter({
      name: 'folio_benchmark_dead_letters_total',
      help: 'Benchmark pipelines this process took from the dead-letter queue',
      registers: [registry],
    }),
    benchmarkDepth: new Gauge({
      name: 'folio_benchmark_queue_depth',
      help: 'Benchmark pipelines not finished, by state (queued, running), over all processes',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    cloudAlarms: new Gauge({
      name: 'folio_cloud_alarm',
      help: 'Cloud alarms of the specification: 1 while firing (pipeline_dead_letter, queue_backlog, api_5xx)',
      labelNames: ['alarm'] as const,
      registers: [registry],
    }),
    alarmFiring: new Gauge({
      name: 'folio_alarm_firing',
      help: 'Alarm conditions with an open episode (1), read from the minute check at scrape time',
      labelNames: ['condition'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
