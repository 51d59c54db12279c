import { z } from 'zod';
import { AccountSettings, AccountSettingsPatch, getAccountSettings, updateAccountSettings } from '../account/account-settings.ts';
import { Balance, getBalance } from '../credits/credits.ts';
import { router, userProcedure } from '../trpc/trpc.ts';

const Me = z.object({
  id: z.uuid(),
  email: z.string(),
  tenantId: z.uuid().nullable(),
  isTenantAdmin: z.boolean(),
  isAdmin: z.boolean(),
  balance: Balance,
});

export const accountRouter = router({
  me: userProcedure
    .meta({ openapi: { method: 'GET', path: '/api/me', tags: ['account'], summary: 'The signed-in user and their credit balance', protect: true } })
    .input(z.void())
    .output(Me)
    .query(async ({ ctx }) => {
      const { customerId: _customerId, ...user } = ctx.user;
      return { ...user, balance: await getBalance(ctx.deps.db, ctx.user.customerId) };
    }),
  settings: userProcedure
    .meta({ openapi: { method: 'GET', path: '/api/me/settings', tags: ['account'], summary: "The signed-in user's account settings", protect: true } })
    .input(z.void())
    .output(AccountSettings)
    .query(({ ctx }) => getAccountSettings(ctx.deps.db, ctx.user.id)),
  updateSettings: userProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/me/settings',
        tags: ['account'],
        summary: 'Change account settings',
        description:
          '`conversionResultEmail`: mail me when a conversion I started completes (with a 24-hour download link and the report summary) or fails. Off by default; conversions started by email never get it (they get their reply).',
        protect: true,
      },
    })
    .input(AccountSettingsPatch)
    .output(AccountSettings)
    .mutation(({ ctx, input }) => updateAccountSettings(ctx.deps.db, ctx.user.id, input)),
});
