import { z } from 'zod';
import { FigureIdSchema, MAX_ALT_CHARS } from '../conversion/figures.ts';
import { describeFigure } from '../figures/describe-figure.ts';
import { FigureSummary } from '../figures/figures.ts';
import { listFigures } from '../figures/list-figures.ts';
import { fileOwnerProcedure, router } from '../trpc/trpc.ts';

const Description = z
  .object({
    figureId: FigureIdSchema,
    alt: z.string().trim().min(1).max(MAX_ALT_CHARS).optional(),
    decorative: z.literal(true).optional(),
  })
  .refine((input) => (input.alt === undefined) !== (input.decorative === undefined), 'give either alt or decorative: true');

export const figuresRouter = router({
  list: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/files/{fileId}/figures',
        tags: ['figures'],
        summary: "The figures of the file's latest finished conversion: page, picture link, caption, nearby text, description so far",
        description: '409 FIGURES_UNAVAILABLE when the file has no finished conversion with stored pages (not converted yet, or a DOCX).',
        protect: true,
      },
    })
    .output(z.object({ jobId: z.uuid(), figures: z.array(FigureSummary) }))
    .query(({ ctx, input }) => listFigures(ctx.deps, input.fileId)),

  describe: fileOwnerProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/files/{fileId}/figures/{figureId}',
        tags: ['figures'],
        summary: 'Stores alt text for a figure (or marks it decorative) and renders the HTML, tagged PDF and report again; free of charge',
        description:
          'Body: {"alt": "…"} or {"decorative": true}. The zip at the download link is replaced; wcagStatus turns passed once the last figure is described. 404 NOT_FOUND for an unknown figure id; 409 FIGURES_UNAVAILABLE as for the list.',
        protect: true,
      },
    })
    .input(Description)
    .output(z.object({ figure: FigureSummary, wcagStatus: z.enum(['passed', 'failed']), figuresNeedingAlt: z.number() }))
    .mutation(({ ctx, input }) =>
      describeFigure(ctx.deps, {
        fileId: input.fileId,
        figureId: input.figureId,
        description: input.decorative ? { decorative: true } : { alt: input.alt! },
        userId: ctx.user.id,
      }),
    ),
});
