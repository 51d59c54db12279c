import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { relaySendEmail, RelayRequest, RelayResponse } from '../email/relay-send-email.ts';
import { claimPromo } from '../sharing/claim-promo.ts';
import { proxyProcedure, publicProcedure, router } from '../trpc/trpc.ts';

const relayMeta = (path: `/${string}`): OpenApiMeta => ({
  openapi: {
    method: 'POST',
    path,
    tags: ['email'],
    summary: 'Send an email through the library (x-proxy-secret)',
    description:
      'Answers 200 with the library result when the email was sent or deferred, 422 EMAIL_SUPPRESSED when every To recipient is suppressed (do not retry), 500 EMAIL_FAILED when the send failed.',
  },
});

const PromoClaimInput = z.object({ promoSlug: z.string().min(1).max(64), email: z.email().max(320) });
const PromoClaimOutput = z.object({ ok: z.boolean(), status: z.enum(['sent', 'deferred', 'suppressed', 'failed', 'unavailable']), message: z.string() });

export const emailRouter = router({
  relay: proxyProcedure
    .meta(relayMeta('/api/send-email'))
    .input(RelayRequest)
    .output(RelayResponse)
    .mutation(({ ctx, input }) => relaySendEmail(ctx.deps.email, input)),
  internalRelay: proxyProcedure
    .meta(relayMeta('/internal/send-email'))
    .input(RelayRequest)
    .output(RelayResponse)
    .mutation(({ ctx, input }) => relaySendEmail(ctx.deps.email, input)),
  claimPromo: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/promo/{promoSlug}/claim',
        tags: ['email'],
        summary: 'Email the promo magic sign-in link',
        description:
          'ok is true only when the link email went out; otherwise the message asks the user to request a sign-in link themselves. 429 TOO_MANY_REQUESTS with Retry-After past 3 links an hour to one address or 20 claims an hour from one IP.',
      },
    })
    .input(PromoClaimInput)
    .output(PromoClaimOutput)
    .mutation(({ ctx, input }) =>
      claimPromo({ ...ctx.deps, email: ctx.deps.email }, { ...input, ip: ctx.req.ip ?? ctx.req.socket.remoteAddress ?? 'unknown' }),
    ),
});
