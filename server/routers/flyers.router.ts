import { z } from 'zod';
import { cancelFlyerJob, compFlyerReflow, FlyerJob } from '../flyers/flyer-jobs.ts';
import { FlyerStatus, readFlyer, requestFlyer } from '../flyers/request-flyer.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { router, userProcedure } from '../trpc/trpc.ts';

const FlyerRef = z.object({ flyerJobId: z.uuid() });

export const flyersRouter = router({
  request: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/files/{fileId}/preserve-formatting',
        tags: ['conversion'],
        summary: 'Convert an uploaded PDF with Preserve Formatting (a flyer: the layout kept, text placed where the PDF draws it)',
        description:
          'Charges one credit per page now (refunded on cancel or failure) and queues the render. At most 20 pages (413 PDF_TOO_MANY_PAGES); 402 INSUFFICIENT_CREDITS / FREE_PAGE_LIMIT with the purchase link; 404 for a file that is not yours; 409 CONFLICT for a file that is not an uploaded PDF.',
        protect: true,
      },
    })
    .input(z.object({ fileId: z.uuid() }))
    .output(z.object({ flyerJobId: z.uuid(), status: z.literal('pending'), pages: z.number(), creditsCharged: z.number() }))
    .mutation(({ ctx, input }) => requestFlyer(ctx.deps, ctx.user, input.fileId)),
  status: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/flyers/{flyerJobId}',
        tags: ['conversion'],
        summary: 'A Preserve Formatting job, with a 24-hour link to its HTML once completed',
        protect: true,
      },
    })
    .input(FlyerRef)
    .output(FlyerStatus)
    .query(({ ctx, input }) => readFlyer({ ...ctx.deps, linkSecret: resolveSigningSecrets(ctx.deps.config).download }, ctx.user, input.flyerJobId)),
  cancel: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/flyers/{flyerJobId}/cancel',
        tags: ['conversion'],
        summary: 'Cancel a Preserve Formatting job',
        description:
          'The job becomes failed with the message "Cancelled by user" and its charge is refunded; a worker still running loses its claim. 404 for a job that is not yours, 409 CONFLICT when it already ended.',
        protect: true,
      },
    })
    .input(FlyerRef)
    .output(FlyerJob)
    .mutation(({ ctx, input }) => cancelFlyerJob(ctx.deps.db, ctx.user, input.flyerJobId)),
  compedReflow: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/flyers/{flyerJobId}/comped-reflow',
        tags: ['conversion'],
        summary: 'Turn an ended Preserve Formatting job into a free reflowed conversion',
        description:
          'Starts a conversion of the same file that charges nothing. 409 ALREADY_RESOLVED when this flyer job was already comped (cancelling that conversion clears it); 409 CONFLICT while the flyer job runs, when its file was deleted, or when a conversion of the file is running.',
        protect: true,
      },
    })
    .input(FlyerRef)
    .output(z.object({ flyerJobId: z.uuid(), fileId: z.uuid(), jobId: z.uuid(), status: z.string(), totalChunks: z.number(), totalPages: z.number() }))
    .mutation(({ ctx, input }) => compFlyerReflow(ctx.deps, ctx.user, input.flyerJobId)),
});
