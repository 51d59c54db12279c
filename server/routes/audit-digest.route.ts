import { sendAuditDigest, Cadence } from '../audit-digest/send-audit-digest.ts';
import { secretsEqual } from '../secrets.ts';
import type { RawRouteMount } from './index.ts';

/**
 * POST /internal/audit-digest?cadence=daily|weekly (x-proxy-secret). Raw, because
 * its failure answer carries the counts: 403 secret, 400 cadence, 500 relay URL
 * unset, 502 {ok: false, sent, suppressed, failed} when any digest failed.
 */
export const mountAuditDigestRoute: RawRouteMount = (app, deps) => {
  app.post('/internal/audit-digest', async (req, res) => {
    const given = req.headers['x-proxy-secret'];
    if (!secretsEqual(typeof given === 'string' ? given : undefined, deps.config.secrets.proxyShared)) {
      res.status(403).json({ code: 'FORBIDDEN', message: 'Invalid proxy secret' });
      return;
    }
    const cadence = Cadence.safeParse(req.query.cadence);
    if (!cadence.success) {
      res.status(400).json({ code: 'VALIDATION_FAILED', message: 'cadence must be daily or weekly' });
      return;
    }
    if (!deps.config.alerts.internalSendEmailUrl) {
      deps.log.error({ event: 'audit_digest_unconfigured' }, 'INTERNAL_SEND_EMAIL_URL is not set');
      res.status(500).json({ code: 'INTERNAL', message: 'INTERNAL_SEND_EMAIL_URL is not set', ok: false });
      return;
    }
    try {
      const result = await sendAuditDigest({ config: deps.config, db: deps.db, log: deps.log, now: deps.clock.now() }, cadence.data);
      res.status(result.ok ? 200 : 502).json(result);
    } catch (error) {
      deps.log.error({ err: error }, 'audit digest failed');
      res.status(500).json({ code: 'INTERNAL', message: 'Audit digest failed', ok: false });
    }
  });
};
