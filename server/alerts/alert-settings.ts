import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';
import { DomainError } from '../errors.ts';
import { AlertType } from './dispatch-alert.ts';
import { insertAdminAudit } from '../db/admin-audit.ts';

const Channel = z.enum(['email', 'messenger']);

export const AlertSetting = z.object({
  alertType: AlertType,
  enabled: z.boolean(),
  channels: z.array(Channel),
  /** Where the email channel goes instead of ALERT_EMAIL; null: ALERT_EMAIL. */
  emailTo: z.string().nullable(),
  /** False while no row exists and the defaults apply. */
  customised: z.boolean(),
  updatedAt: z.string().nullable(),
});
export type AlertSetting = z.infer<typeof AlertSetting>;

export const AlertSettingsList = z.object({ settings: z.array(AlertSetting) });

export const AlertSettingPatch = z
  .object({
    alertType: AlertType,
    enabled: z.boolean().optional(),
    // At least one channel: muting is `enabled: false`, so a muted type answers 'disabled' rather than 'unconfigured' forever.
    channels: z
      .array(Channel)
      .min(1)
      .max(2)
      .refine((list) => new Set(list).size === list.length, 'channels repeat')
      .optional(),
    emailTo: z.email().max(320).nullable().optional(),
  })
  .strict();
export type AlertSettingPatch = z.infer<typeof AlertSettingPatch>;

const Row = z.object({ alertType: z.string(), enabled: z.boolean(), channels: z.array(z.string()), emailTo: z.string().nullable(), updatedAt: z.date() });
type Row = z.infer<typeof Row>;

const DEFAULTS = { enabled: true, channels: ['email', 'messenger'] as Array<'email' | 'messenger'>, emailTo: null };

type AlertTypeName = z.infer<typeof AlertType>;

function toSetting(alertType: AlertTypeName, row: Row | undefined): AlertSetting {
  if (!row) return { alertType, ...DEFAULTS, customised: false, updatedAt: null };
  return {
    alertType,
    enabled: row.enabled,
    channels: row.channels.filter((channel): channel is 'email' | 'messenger' => channel === 'email' || channel === 'messenger'),
    emailTo: row.emailTo,
    customised: true,
    updatedAt: row.updatedAt.toISOString(),
  };
}

type Queryable = Pick<Database, 'any' | 'maybeOne' | 'one' | 'query'>;

async function readRows(db: Queryable, types: readonly string[]): Promise<Map<string, Row>> {
  const rows = await db.any(sql.type(Row)`
    select alert_type as "alertType", enabled, channels, email_to as "emailTo", updated_at as "updatedAt"
      from admin_notification_settings where alert_type = any(${sql.array([...types], 'text')})`);
  return new Map(rows.map((row) => [row.alertType, row]));
}

/** GET /api/admin/alert-settings: every alert type with what applies to it now (its row, or the defaults). */
export async function listAlertSettings(db: Queryable): Promise<{ settings: AlertSetting[] }> {
  const rows = await readRows(db, AlertType.options);
  return { settings: AlertType.options.map((type) => toSetting(type, rows.get(type))) };
}

/**
 * PATCH /api/admin/alert-settings/:alertType: changes the given fields (the
 * others keep their value or default) and writes an `alert_settings_update`
 * audit entry with the before and after, in one transaction.
 */
export async function updateAlertSetting(db: Database, actorId: string, patch: AlertSettingPatch): Promise<AlertSetting> {
  if (patch.enabled === undefined && patch.channels === undefined && patch.emailTo === undefined) {
    throw new DomainError('BAD_REQUEST', 'Nothing to change: give enabled, channels or emailTo');
  }
  return db.transaction(async (tx) => {
    const before = toSetting(patch.alertType, (await readRows(tx, [patch.alertType])).get(patch.alertType));
    const next = {
      enabled: patch.enabled ?? before.enabled,
      channels: patch.channels ?? before.channels,
      emailTo: patch.emailTo === undefined ? before.emailTo : (patch.emailTo?.toLowerCase() ?? null),
    };
    const row = await tx.one(sql.type(Row)`
      insert into admin_notification_settings (alert_type, enabled, channels, email_to, updated_at)
      values (${patch.alertType}, ${next.enabled}, ${sql.array(next.channels, 'text')}, ${next.emailTo}, now())
      on conflict (alert_type) do update set enabled = excluded.enabled, channels = excluded.channels, email_to = excluded.email_to, updated_at = now()
      returning alert_type as "alertType", enabled, channels, email_to as "emailTo", updated_at as "updatedAt"`);
    const after = toSetting(patch.alertType, row);
    const strip = ({ enabled, channels, emailTo }: AlertSetting) => ({ enabled, channels, emailTo });
    await insertAdminAudit(tx, { actorId, action: 'alert_settings_update', subject: patch.alertType, details: { before: strip(before), after: strip(after) } });
    return after;
  });
}
