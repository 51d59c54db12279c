import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Log } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { SendRequest, SendResult } from '../email/types.ts';
import { recordAlertOutcome } from '../delivery-events/delivery-events.queries.ts';
import { dispatchAdminAlert, type AdminAlert, type AlertDeps } from './dispatch-alert.ts';

export type RaiseAlertDeps = {
  config: Config;
  db: Database;
  log: Log;
  metrics?: Metrics;
  sendEmail: (request: SendRequest) => Promise<SendResult>;
};

/** What raising an alert needs, from a process's services (its email library sends the alert mail). */
export function raiseAlertDeps(deps: Omit<RaiseAlertDeps, 'sendEmail'> & { email: { send: RaiseAlertDeps['sendEmail'] } }): RaiseAlertDeps {
  return { config: deps.config, db: deps.db, log: deps.log, metrics: deps.metrics, sendEmail: (request) => deps.email.send(request) };
}

/** The dispatcher's view of the same. */
export function alertDispatchDeps(deps: RaiseAlertDeps): AlertDeps {
  return {
    db: deps.db,
    log: deps.log,
    metrics: deps.metrics,
    alertEmail: deps.config.alerts.alertEmail,
    messenger: deps.config.alerts.messenger,
    sendEmail: deps.sendEmail,
  };
}

export type AlertOutcome = 'delivered' | 'disabled' | 'unconfigured' | 'failed';

/**
 * Raises an admin alert the way the event receivers do: through
 * INTERNAL_ALERT_URL when it is set (another deployment's alert route, with
 * x-proxy-secret), otherwise through this process's dispatcher — the same
 * code POST /internal/email-alert runs, without an HTTP round trip to ourselves.
 */
async function raiseAdminAlert(deps: RaiseAlertDeps, alert: AdminAlert): Promise<AlertOutcome> {
  const url = deps.config.alerts.internalAlertUrl;
  if (!url) {
    const result = await dispatchAdminAlert(alertDispatchDeps(deps), alert);
    return result.delivery;
  }
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-proxy-secret': deps.config.secrets.proxyShared ?? '' },
      body: JSON.stringify(alert),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await response.json().catch(() => null)) as { delivery?: unknown } | null;
    if (response.ok) return body?.delivery === 'disabled' ? 'disabled' : 'delivered';
    return response.status === 503 ? 'unconfigured' : 'failed';
  } catch {
    return 'failed';
  }
}

/**
 * Raises the alert for a claimed row and records its outcome on the row
 * (an unconfigured one as `not_configured`, the specification's word). The
 * claim is given back unless the alert was delivered or deliberately
 * disabled, so the next event or poll alerts again.
 */
export async function raiseClaimedAlert(deps: RaiseAlertDeps, sendId: string, alert: AdminAlert): Promise<AlertOutcome> {
  const outcome = await raiseAdminAlert(deps, { ...alert, sendId });
  const release = outcome !== 'delivered' && outcome !== 'disabled';
  await recordAlertOutcome(deps.db, sendId, outcome === 'unconfigured' ? 'not_configured' : outcome, { release });
  if (release) deps.log.warn({ event: 'email_alert_claim_released', sendId, outcome }, 'admin alert did not go out; claim released');
  return outcome;
}
