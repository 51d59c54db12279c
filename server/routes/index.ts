import type { Express } from 'express';
import type { AppDeps } from '../trpc/context.ts';
import { mountConvertStream } from './convert-stream.route.ts';
import { mountDownload } from './download.route.ts';
import { mountFigurePicture } from './figure-picture.route.ts';
import { mountFileUpload } from './files.route.ts';
import { mountAuditDigestRoute } from './audit-digest.route.ts';
import { mountEmailAlertRoute } from './email-alert.route.ts';
import { mountEmailEventsPollShim } from './email-events-poll.route.ts';
import { mountIntakeRoutes } from './intake.route.ts';
import { mountMetricsRoute } from './metrics.route.ts';
import { mountResendEventsRoute } from './resend-events.route.ts';
import { mountSesEventsRoute } from './ses-events.route.ts';
import { mountSharedRoute } from './shared.route.ts';
import { mountWebhookBodilessPosts } from './webhooks.route.ts';
import { mountStorageBodilessPosts } from './storage.route.ts';
import { mountBenchmarkRoutes } from './benchmark.route.ts';

/**
 * Raw express routes: the ones that must see the unparsed body (signature
 * checks, multipart uploads) or stream (SSE, downloads). Each area exports a
 * mount function from its `*.route.ts`; they run before the JSON parser.
 */
export type RawRouteMount = (app: Express, deps: AppDeps) => void;

export const rawRouteMounts: RawRouteMount[] = [
  mountResendEventsRoute,
  mountSesEventsRoute,
  mountEmailAlertRoute,
  mountMetricsRoute,
  mountAuditDigestRoute,
  mountEmailEventsPollShim,
  mountFileUpload,
  mountConvertStream,
  mountDownload,
  mountFigurePicture,
  mountSharedRoute,
  mountIntakeRoutes,
  mountWebhookBodilessPosts,
  mountStorageBodilessPosts,
  mountBenchmarkRoutes,
];
