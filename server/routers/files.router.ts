import { z } from 'zod';
import { deleteFile } from '../conversion-jobs/delete-file.ts';
import { FileListItem, listFiles } from '../conversion-jobs/list-files.ts';
import { fileOwnerProcedure, router, userProcedure } from '../trpc/trpc.ts';

export const filesRouter = router({
  list: userProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/files', tags: ['files'], summary: "The caller's files with status, phase, pages and batchWaiting", protect: true },
    })
    .input(z.void())
    .output(z.object({ files: z.array(FileListItem) }))
    .query(async ({ ctx }) => ({ files: await listFiles(ctx.deps, { ownerId: ctx.user.id }) })),

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
      await deleteFile(ctx.deps, { fileId: input.fileId });
      return { deleted: true as const };
    }),
});
