import { CreditReceipt, GrantCreditsInput, grantCredits, RecordPurchaseInput, recordPurchase } from '../credits/grant-credits.ts';
import { adminProcedure, proxyProcedure, router } from '../trpc/trpc.ts';

export const creditsRouter = router({
  grant: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/admin/credits',
        tags: ['admin'],
        summary: 'Grant credits to a customer (admins)',
        description:
          'Body `{email | customerId, credits, reason}`. The customer becomes a paid customer; an address with no customer yet gets one (its credits wait for the first sign-in). Writes a `credit_grant` admin audit entry and mails a receipt; `receiptSent` is true only when it went out. 404 CUSTOMER_NOT_FOUND for an unknown customerId.',
        protect: true,
      },
    })
    .input(GrantCreditsInput)
    .output(CreditReceipt)
    .mutation(({ ctx, input }) => grantCredits(ctx.deps, ctx.user, input)),
  recordPurchase: proxyProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/internal/credits/purchase',
        tags: ['admin'],
        summary: "Record a paid purchase of credits (a payment provider's webhook handler; x-proxy-secret)",
        description:
          'Idempotent on `paymentReference`: a repeated call answers the first transaction with `duplicate: true` and credits and mails nothing again; the same reference with other figures is 409 CONFLICT. Mails a receipt with amount, credits and balance.',
      },
    })
    .input(RecordPurchaseInput)
    .output(CreditReceipt)
    .mutation(({ ctx, input }) => recordPurchase(ctx.deps, input)),
});
