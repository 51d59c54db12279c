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
});

export type AppRouter = typeof appRouter;
