import { z } from 'zod';
import { pollResendEvents } from '../delivery-events/poll-resend-events.ts';
import { proxyProcedure, router } from '../trpc/trpc.ts';

const PollOutput = z.object({
  ok: z.boolean(),
  truncated: z.boolean(),
  error: z.string().optional(),
  pages: z.number().int(),
  seen: z.number().int(),
  recorded: z.number().int(),
  unchanged: z.number().int(),
  skipped: z.number().int(),
  backfilled: z.number().int(),
  alerts: z.number().int(),
  alertsFailed: z.number().int(),
});

export const emailEventsRouter = router({
  poll: proxyProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/internal/email-events/poll',
        tags: ['email'],
        summary: 'Run the provider-A events poller now (x-proxy-secret)',
        description:
          'Reads at most 5 pages (500 emails). 200 with ok false and truncated true when more remain; ok false with error when the list call failed. Counts include backfilled.',
      },
    })
    .input(z.object({}).optional())
    .output(PollOutput)
    .mutation(({ ctx }) =>
      pollResendEvents({
        config: ctx.deps.config,
        db: ctx.deps.db,
        log: ctx.log,
        metrics: ctx.deps.metrics,
        sendEmail: (request) => ctx.deps.email.send(request),
        now: ctx.deps.clock.now(),
      }),
    ),
});
