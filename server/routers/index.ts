import { router } from '../trpc/trpc.ts';
import { accountRouter } from './account.router.ts';
import { adminRouter } from './admin.router.ts';
import { emailRouter } from './email.router.ts';
import { emailEventsRouter } from './email-events.router.ts';
import { conversionRouter } from './conversion.router.ts';
import { figuresRouter } from './figures.router.ts';
import { filesRouter } from './files.router.ts';
import { sharingRouter } from './sharing.router.ts';
import { webhooksRouter } from './webhooks.router.ts';
import { storageRouter } from './storage.router.ts';
import { benchmarkRouter } from './benchmark.router.ts';
import { budgetRouter } from './budget.router.ts';
import { creditsRouter } from './credits.router.ts';
import { contactRouter } from './contact.router.ts';
import { outreachRouter } from './outreach.router.ts';
import { flyersRouter } from './flyers.router.ts';
import { keepInputsStrict } from '../trpc/strict-inputs.ts';

/** The one router: tRPC serves all of it at /trpc, and the procedures with OpenAPI meta also at their REST paths. */
export const appRouter = router({
  account: accountRouter,
  admin: adminRouter,
  email: emailRouter,
  emailEvents: emailEventsRouter,
  files: filesRouter,
  conversion: conversionRouter,
  figures: figuresRouter,
  sharing: sharingRouter,
  webhooks: webhooksRouter,
  storage: storageRouter,
  benchmark: benchmarkRouter,
  budget: budgetRouter,
  credits: creditsRouter,
  contact: contactRouter,
  outreach: outreachRouter,
  flyers: flyersRouter,
});
// once, with the router: trpc-to-openapi would otherwise coerce its inputs' booleans and numbers in place
keepInputsStrict(appRouter);

export type AppRouter = typeof appRouter;
