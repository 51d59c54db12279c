import { sendAuditDigest, Cadence } from '../audit-digest/send-audit-digest.ts';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { requireProxySecret } from '../http/guards.ts';
import type { RawRouteMount } from './index.ts';

/**
 * POST /internal/audit-digest?cadence=daily|weekly (x-proxy-secret). Raw, because
 * its failure answer carries the counts: 403 secret, 400 cadence, 500 relay URL
 * unset, 502 {ok: false, sent, suppressed, failed} when any digest failed.
 */
export const mountAuditDigestRoute: RawRouteMount = (app, deps) => {
  app.post('/internal/audit-digest', async (req, res) => {
    try {
      requireProxySecret(deps, req.headers);
      const cadence = Cadence.safeParse(req.query.cadence);
      if (!cadence.success) throw new DomainError('VALIDATION_FAILED', 'cadence must be daily or weekly');
      if (!deps.config.alerts.internalSendEmailUrl) {
        deps.log.error({ event: 'audit_digest_unconfigured' }, 'INTERNAL_SEND_EMAIL_URL is not set');
        throw new DomainError('INTERNAL', 'INTERNAL_SEND_EMAIL_URL is not set');
      }
      const result = await sendAuditDigest({ config: deps.config, db: deps.db, log: deps.log, now: deps.clock.now() }, cadence.data);
      res.status(result.ok ? 200 : 502).json(result);
    } catch (error) {
      if (!(error instanceof DomainError)) deps.log.error({ err: error }, 'audit digest failed');
      sendError(res, error);
    }
  });
};
