import express from 'express';
import { AdminAlert, alertResponse, dispatchAdminAlert } from '../alerts/dispatch-alert.ts';
import { alertDispatchDeps, raiseAlertDeps } from '../alerts/raise-alert.ts';
import { sendError } from '../http/errors.ts';
import { DomainError } from '../errors.ts';
import { requireProxySecret } from '../http/guards.ts';
import type { RawRouteMount } from './index.ts';

/**
 * POST /internal/email-alert (x-proxy-secret). A raw route because its
 * answers are the dispatcher results of "Alert route responses" (200 with
 * success/delivery, 503 ALERT_CHANNEL_UNCONFIGURED, 502), not a procedure's.
 */
export const mountEmailAlertRoute: RawRouteMount = (app, deps) => {
  app.post('/internal/email-alert', express.json({ limit: '256kb' }), async (req, res) => {
    try {
      requireProxySecret(deps, req.headers);
      const parsed = AdminAlert.safeParse(req.body ?? {});
      if (!parsed.success) throw new DomainError('VALIDATION_FAILED', 'Invalid alert body');
      const result = await dispatchAdminAlert(alertDispatchDeps(raiseAlertDeps(deps)), parsed.data);
      const answer = alertResponse(result);
      res.status(answer.status).json(answer.body);
    } catch (error) {
      sendError(res, error);
    }
  });
};
