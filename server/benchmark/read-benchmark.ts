import { signDownloadToken } from '../conversion-jobs/download-token.ts';
import { DomainError } from '../errors.ts';
import type { Deps } from '../deps.ts';
import type { RequestUser } from '../http/guards.ts';
import { selectResults, selectSession, type PipelineValue } from './benchmark.queries.ts';

export const OUTPUT_KINDS = ['html', 'pdf', 'report'] as const;
type OutputKind = (typeof OUTPUT_KINDS)[number];

/** What a download token of one pipeline's outputs is bound to (the download-token scheme binds one id). */
export function outputTokenSubject(sessionId: string, pipeline: number): string {
  return `benchmark/${sessionId}/${pipeline}`;
}

type PipelineResult = Omit<PipelineValue, 'outputs' | 'deadLettered' | 'startedAt' | 'finishedAt' | 'worker'> & {
  pipeline: number;
  downloads?: Record<OutputKind, string>;
};

export type BenchmarkSession = {
  sessionId: string;
  status: 'running' | 'complete';
  fileId: string;
  createdAt: string;
  completedAt: string | null;
  results: PipelineResult[];
};

/**
 * A session as its owner (or an admin) sees it: one result per pipeline in
 * the order asked for, with download links of a finished pipeline's HTML,
 * tagged PDF and report, signed for 24 hours. Anyone else gets NOT_FOUND,
 * as for a session that does not exist.
 */
export async function readBenchmark(
  deps: Pick<Deps, 'db' | 'clock'>,
  input: { sessionId: string; user: Pick<RequestUser, 'id' | 'isAdmin'>; downloadSecret: string },
): Promise<BenchmarkSession> {
  const session = await selectSession(deps.db, input.sessionId);
  if (!session || (session.ownerId !== input.user.id && !input.user.isAdmin)) throw new DomainError('NOT_FOUND', 'Benchmark session not found');
  const now = deps.clock.now();
  const results = (await selectResults(deps.db, session.id)).map(({ pipeline, value }): PipelineResult => {
    const { outputs, deadLettered: _deadLettered, startedAt: _startedAt, finishedAt: _finishedAt, worker: _worker, ...shown } = value;
    if (!outputs || value.status !== 'complete') return { pipeline, ...shown };
    const token = encodeURIComponent(signDownloadToken(input.downloadSecret, outputTokenSubject(session.id, pipeline), now));
    const link = (kind: OutputKind) => `/api/benchmark/${session.id}/pipelines/${pipeline}/${kind}?token=${token}`;
    return { pipeline, ...shown, downloads: { html: link('html'), pdf: link('pdf'), report: link('report') } };
  });
  return {
    sessionId: session.id,
    status: session.status,
    fileId: session.fileId,
    createdAt: session.createdAt,
    completedAt: session.completedAt,
    results,
  };
}

/** What POST /api/benchmark answers: at once `running` on the queue deployment; the finished session inline. */
export async function startAnswer(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  input: { sessionId: string; user: Pick<RequestUser, 'id' | 'isAdmin'>; downloadSecret: string },
): Promise<{ sessionId: string; status: 'running' } | BenchmarkSession> {
  if (deps.config.benchmark.mode !== 'inline') return { sessionId: input.sessionId, status: 'running' };
  return readBenchmark(deps, input);
}
