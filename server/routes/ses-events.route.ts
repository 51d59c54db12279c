import express from 'express';
import { raiseAlertDeps } from '../alerts/raise-alert.ts';
import { handleSesEvents } from '../delivery-events/handle-ses-events.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { requireEventBusSecret } from '../http/guards.ts';
import type { RawRouteMount } from './index.ts';

/** POST /api/webhooks/ses-events: the event bus's API destination, authenticated by X-Webhook-Secret. */
export const mountSesEventsRoute: RawRouteMount = (app, deps) => {
  app.post('/api/webhooks/ses-events', express.json({ limit: '1mb', type: () => true }), async (req, res) => {
    try {
      requireEventBusSecret(deps, req.headers);
      const result = await handleSesEvents({ ...raiseAlertDeps(deps), now: deps.clock.now() }, req.body);
      res.status(200).json({ ok: true, ...result });
    } catch (error) {
      if (isDomainError(error) && error.status < 500) {
        sendError(res, error);
        return;
      }
      // 500 makes the bus retry (for up to 24 hours).
      deps.log.error({ err: error }, 'provider-B event could not be recorded');
      sendError(res, new DomainError('INTERNAL', 'Event not recorded', { cause: error }));
    }
  });
};
