import { z } from 'zod';
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
});
