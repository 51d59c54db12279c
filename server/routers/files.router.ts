import { z } from 'zod';
import { FileListItem } from '../conversion-jobs/service.ts';
import { fileOwnerProcedure, router, userProcedure } from '../trpc/trpc.ts';

export const filesRouter = router({
  list: userProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/files', tags: ['files'], summary: "The caller's files with status, phase, pages and batchWaiting", protect: true },
    })
    .input(z.void())
    .output(z.object({ files: z.array(FileListItem) }))
    .query(async ({ ctx }) => ({ files: [...(await ctx.deps.services.conversion.listFiles(ctx.user.id))] })),

  delete: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/files/{fileId}',
        tags: ['files'],
        summary: 'Cancels any live conversion, then removes the file and its objects',
        protect: true,
      },
    })
    .output(z.object({ deleted: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await ctx.deps.services.conversion.deleteFile(input.fileId);
      return { deleted: true as const };
    }),
});
