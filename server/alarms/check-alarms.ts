import type { AlertOutcome } from '../alerts/raise-alert.ts';
import { raiseAdminAlert, raiseAlertDeps } from '../alerts/raise-alert.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { ALARMS, type AlarmReading, readAlarms } from './alarm-conditions.ts';
import { claimEpisodeAlert, endEpisode, openEpisodes, releaseEpisodeAlert, upsertOpenEpisode } from './alarms.queries.ts';

export type AlarmCheck = { firing: string[]; alerted: Array<{ condition: string; outcome: AlertOutcome }>; ended: string[] };

type AlarmDeps = Pick<Deps, 'db' | 'config' | 'log' | 'metrics'> & { email: EmailService };

/**
 * The minute check: reads every condition at `now`; a firing condition opens
 * its episode (or keeps the open one), a quiet one ends it. Each episode's
 * alert is claimed (alerted_at) before it is raised, so it goes out once
 * however many checkers run; a claim whose alert did not go out is released
 * and the next minute tries again, as a delivery-failure alert does.
 */
export async function checkAlarms(deps: AlarmDeps, now: Date): Promise<AlarmCheck> {
  const readings = await readAlarms(deps, now);
  const open = new Map((await openEpisodes(deps.db)).map((episode) => [episode.condition, episode]));
  const result: AlarmCheck = { firing: [], alerted: [], ended: [] };
  for (const reading of readings) {
    const episode = open.get(reading.condition);
    if (!reading.firing) {
      if (episode) {
        await endEpisode(deps.db, episode.id, now);
        result.ended.push(reading.condition);
      }
      continue;
    }
    result.firing.push(reading.condition);
    const id = await upsertOpenEpisode(deps.db, reading, now);
    // an episode already alerted stays claimed until it ends: no claim to try again each minute
    if (episode?.alertedAt || !(await claimEpisodeAlert(deps.db, id, now))) continue;
    const outcome = await raiseAlarm(deps, reading);
    if (outcome !== 'delivered' && outcome !== 'disabled') {
      await releaseEpisodeAlert(deps.db, id);
      deps.log.warn({ event: 'alarm_alert_released', condition: reading.condition, outcome }, 'alarm alert did not go out; claim released');
    }
    result.alerted.push({ condition: reading.condition, outcome });
  }
  return result;
}

function raiseAlarm(deps: AlarmDeps, reading: AlarmReading): Promise<AlertOutcome> {
  const text = ALARMS[reading.condition].describe(reading.value);
  const facts = Object.entries(reading.details).map(([key, value]) => `${key}: ${value}`);
  return raiseAdminAlert(raiseAlertDeps(deps), {
    type: 'monitoring_alarm',
    subject: `Alarm ${reading.condition}: ${text}`,
    message: [text, ...facts].join('\n'),
    details: { condition: reading.condition, value: reading.value, ...reading.details },
  });
}
