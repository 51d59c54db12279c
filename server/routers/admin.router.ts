import { z } from 'zod';
import { EmailLogPage, EmailLogQuery, listEmailLog, listSuppressions, removeSuppression, SuppressionItem } from '../email-admin/email-admin.ts';
import { AlertSetting, AlertSettingPatch, AlertSettingsList, listAlertSettings, updateAlertSetting } from '../alerts/alert-settings.ts';
import { adminProcedure, router } from '../trpc/trpc.ts';

const SuppressionsQuery = z.object({
  email: z.string().max(320).optional(),
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(500).default(100),
});
const SuppressionsPage = z.object({ suppressions: z.array(SuppressionItem), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() });

/** The REST bridge hands path parameters over still percent-encoded ('a%40b.com'). */
function decodePathParam(value: string) {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export const adminRouter = router({
  emailLog: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/admin/email-log',
        tags: ['admin'],
        summary: 'Send log with a status summary',
        description:
          'Newest first. Filters: status, category, provider, exact recipient, subject substring. summary counts rows per status under the other filters.',
      },
    })
    .input(EmailLogQuery)
    .output(EmailLogPage)
    .query(({ ctx, input }) => listEmailLog(ctx.deps.db, input)),
  emailSuppressions: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/admin/email-suppressions', tags: ['admin'], summary: 'The suppression list' } })
    .input(SuppressionsQuery)
    .output(SuppressionsPage)
    .query(({ ctx, input }) => listSuppressions(ctx.deps.db, input)),
  removeEmailSuppression: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/admin/email-suppressions/{email}',
        tags: ['admin'],
        summary: 'Remove a suppression',
        description: 'Writes an email_unsuppress entry to the admin audit log. 404 when the address is not suppressed.',
      },
    })
    .input(z.object({ email: z.string().min(3).max(320) }))
    .output(z.object({ removed: z.literal(true), email: z.string(), reason: z.string() }))
    .mutation(({ ctx, input }) => removeSuppression(ctx.deps.db, { email: decodePathParam(input.email), actorId: ctx.user.id })),
  alertSettings: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/admin/alert-settings',
        tags: ['admin'],
        summary: 'Admin alert settings per alert type',
        description:
          'Every alert type with what applies now: its row, or the defaults (enabled, email and messenger, email to ALERT_EMAIL; `customised: false`).',
      },
    })
    .input(z.void())
    .output(AlertSettingsList)
    .query(({ ctx }) => listAlertSettings(ctx.deps.db)),
  updateAlertSetting: adminProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/admin/alert-settings/{alertType}',
        tags: ['admin'],
        summary: 'Mute, route or reroute one alert type',
        description:
          'Any of `enabled`, `channels` (email, messenger; at least one: mute with enabled false), `emailTo` (null: back to ALERT_EMAIL). Writes an `alert_settings_update` audit entry with before and after.',
      },
    })
    .input(AlertSettingPatch)
    .output(AlertSetting)
    .mutation(({ ctx, input }) => updateAlertSetting(ctx.deps.db, ctx.user.id, input)),
});
