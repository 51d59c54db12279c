import express from 'express';
import { raiseAlertDeps } from '../alerts/raise-alert.ts';
import { handleResendWebhook } from '../delivery-events/handle-resend-webhook.ts';
import { resendSignatureHeaders } from '../email/providers/resend.ts';
import { isDomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import type { RawRouteMount } from './index.ts';

/** POST /api/webhooks/resend-events: Svix-signed, so it needs the raw body. */
export const mountResendEventsRoute: RawRouteMount = (app, deps) => {
  app.post('/api/webhooks/resend-events', express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
    try {
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const answer = await handleResendWebhook({ ...raiseAlertDeps(deps), now: deps.clock.now() }, resendSignatureHeaders(req.headers), rawBody);
      res.status(answer.status).json(answer.body);
    } catch (error) {
      if (!isDomainError(error) || error.status >= 500) deps.log.error({ err: error }, 'provider-A event could not be recorded');
      sendError(res, error);
    }
  });
};
