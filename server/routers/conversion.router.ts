import { z } from 'zod';
import { cancelConversion } from '../conversion-jobs/cancel-conversion.ts';
import { processNow } from '../conversion-jobs/process-now.ts';
import { ConvertOptions, startConversion } from '../conversion-jobs/start-conversion.ts';
import { issueDownloadLink } from '../conversion-jobs/issue-download-link.ts';
import { BatchLaneOffer, batchLaneOffer } from '../batch/eligibility.ts';
import { fileOwnerProcedure, router, userProcedure } from '../trpc/trpc.ts';

export const conversionRouter = router({
  start: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/convert/{fileId}',
        tags: ['conversion'],
        summary: 'Starts a chunked conversion; holds credits for the pages first',
        protect: true,
      },
    })
    .input(ConvertOptions)
    .output(z.object({ jobId: z.uuid(), status: z.string(), totalChunks: z.number(), totalPages: z.number(), streamUrl: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { fileId, ...options } = input;
      const job = await startConversion(ctx.deps, { fileId, options });
      return { ...job, streamUrl: `/api/convert/${fileId}/stream` };
    }),

  cancel: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/files/{fileId}/cancel',
        tags: ['conversion'],
        summary: 'Cancels the running conversion: nothing charged, file back to uploaded',
        description:
          'A DOCX conversion is cancelled too (its worker stopped, its hold released); `jobId` is null for it, having no chunked job. 409 CONVERSION_FINISHING while assembling; 409 NO_ACTIVE_CONVERSION when nothing runs.',
        protect: true,
      },
    })
    .output(z.object({ cancelled: z.literal(true), jobId: z.uuid().nullable() }))
    .mutation(({ ctx, input }) => cancelConversion(ctx.deps, { fileId: input.fileId })),

  processNow: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/files/{fileId}/process-now',
        tags: ['conversion'],
        summary: 'Takes a job waiting for the batch lane and runs it on-demand now',
        description:
          '409 NOT_BATCH_WAITING when the job is not waiting for the batch lane. `resumed` is false when the batch lane had already finished with the job: the lane resumes it itself.',
        protect: true,
      },
    })
    .output(z.object({ resumed: z.boolean(), jobId: z.uuid() }))
    .mutation(({ ctx, input }) => processNow(ctx.deps, { fileId: input.fileId })),

  batchLane: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/batch-lane',
        tags: ['conversion'],
        summary: 'Whether the batch lane is on, and from how many pages a high-fidelity job goes to it by itself',
        description:
          'Below minPages a high-fidelity conversion on the default parser opts in with `_batchLane: true` in POST /api/convert/{fileId}; the job then waits for the lane (batchWaiting) until it runs, or until process-now.',
        protect: true,
      },
    })
    .input(z.void())
    .output(BatchLaneOffer)
    .query(({ ctx }) => batchLaneOffer(ctx.deps.config.batch)),

  downloadLink: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/files/{fileId}/download-link',
        tags: ['conversion'],
        summary: 'Fresh links for a finished file, valid 24 hours: the zip (url) and its accessible HTML to open in a browser tab (htmlUrl)',
        description: '409 CONFLICT while the file has no finished conversion.',
        protect: true,
      },
    })
    .output(z.object({ url: z.string(), htmlUrl: z.string() }))
    .query(({ ctx, input }) => issueDownloadLink(ctx.deps, { fileId: input.fileId })),
});
