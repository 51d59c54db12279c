import { z } from 'zod';
import { PipelineValue } from '../benchmark/benchmark.queries.ts';
import { readBenchmark, startAnswer } from '../benchmark/read-benchmark.ts';
import { readFleet } from '../benchmark/read-fleet.ts';
import { startBenchmark, StartBenchmarkInput } from '../benchmark/start-benchmark.ts';
import { requireFileAccess } from '../http/guards.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { adminProcedure, router, userProcedure } from '../trpc/trpc.ts';

const Downloads = z.object({ html: z.string(), pdf: z.string(), report: z.string() });
const PipelineResult = PipelineValue.omit({ outputs: true, deadLettered: true, startedAt: true, finishedAt: true, worker: true }).extend({
  pipeline: z.number().int(),
  downloads: Downloads.optional(),
});
const Session = z.object({
  sessionId: z.uuid(),
  status: z.enum(['running', 'complete']),
  fileId: z.uuid(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
  results: z.array(PipelineResult),
});

export const benchmarkRouter = router({
  start: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/benchmark',
        tags: ['benchmark'],
        summary: 'Runs an uploaded PDF through 1 to 6 pipelines (backend, uxOptimizer) to compare them; holds pages x pipelines credits',
        description:
          'Queue mode (default, the cloud deployment): one queue job per pipeline, answers at once with {sessionId, status: "running"}; poll GET /api/benchmark/{sessionId} every 3 seconds. ' +
          'BENCHMARK_MODE=inline (the edge deployment): runs the pipelines before answering and returns the full session. ' +
          'A multipart upload (field `file`, plus `pipelines` as JSON) starts a session of a new file. ' +
          '404 NOT_FOUND for a file the caller cannot read; 409 CONFLICT when it is not an uploaded PDF; 413 PDF_TOO_MANY_PAGES over BENCHMARK_MAX_PAGES; 402 INSUFFICIENT_CREDITS / FREE_PAGE_LIMIT.',
        protect: true,
      },
    })
    .input(StartBenchmarkInput)
    .output(Session.partial({ fileId: true, createdAt: true, completedAt: true, results: true }))
    .mutation(async ({ ctx, input }) => {
      await requireFileAccess(ctx.deps, ctx.user, input.fileId);
      const { sessionId } = await startBenchmark(ctx.deps, input);
      return startAnswer(ctx.deps, { sessionId, user: ctx.user, downloadSecret: resolveSigningSecrets(ctx.deps.config).download });
    }),

  fleet: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/benchmark/fleet',
        tags: ['benchmark'],
        summary: 'Queue depth and the spot-fleet size the autoscaling rule asks for (admins)',
        description:
          'depth = pipelines queued + running. target is the rule (0 -> 0, >=1 -> 1, >=10 -> 2, >=50 -> 4); desired applies the 5-minute cooldown to the fleet state the autoscaler passes (current, lastScaledAt).',
        protect: true,
      },
    })
    .input(z.object({ current: z.coerce.number().int().min(0).max(4).optional(), lastScaledAt: z.iso.datetime({ offset: true }).optional() }))
    .output(
      z.object({
        depth: z.number(),
        queued: z.number(),
        running: z.number(),
        target: z.number(),
        desired: z.number(),
        cooldownRemainingSeconds: z.number(),
        cooldownSeconds: z.number(),
        maxInstances: z.number(),
        backlogAlarm: z.boolean(),
      }),
    )
    .query(({ ctx, input }) => readFleet(ctx.deps, { current: input.current, lastScaledAt: input.lastScaledAt ? new Date(input.lastScaledAt) : undefined })),

  get: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/benchmark/{sessionId}',
        tags: ['benchmark'],
        summary: 'A benchmark session: running or complete, one result per pipeline (owner only)',
        description:
          'Each result: status (queued, running, complete, failed), time, pages, page classes, wcagStatus and violation counts, word recall against the text layer, cost estimate, credits and download links. 404 NOT_FOUND for anyone but the owner.',
        protect: true,
      },
    })
    .input(z.object({ sessionId: z.uuid() }))
    .output(Session)
    .query(({ ctx, input }) =>
      readBenchmark(ctx.deps, { sessionId: input.sessionId, user: ctx.user, downloadSecret: resolveSigningSecrets(ctx.deps.config).download }),
    ),
});
