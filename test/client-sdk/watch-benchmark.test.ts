import { describe, expect, it } from 'vitest';
import { type BenchmarkSession, type FolioClient, FolioError, watchBenchmark } from '../../client-sdk/index.ts';

/** The poller alone, against a stand-in for the one procedure it calls; the real session is watched end to end in test/web. */

const session = (status: 'running' | 'complete'): BenchmarkSession => ({
  sessionId: '00000000-0000-4000-8000-000000000001',
  status,
  fileId: '00000000-0000-4000-8000-000000000002',
  createdAt: '2026-01-01T00:00:00Z',
  completedAt: status === 'complete' ? '2026-01-01T00:00:05Z' : null,
  results: [],
});

function clientAnswering(answers: Array<BenchmarkSession | Error>) {
  const calls: number[] = [];
  const client = {
    benchmark: {
      get: {
        query: async () => {
          calls.push(Date.now());
          const next = answers.shift();
          if (!next) throw new Error('no more answers');
          if (next instanceof Error) throw next;
          return next;
        },
      },
    },
  } as unknown as FolioClient;
  return { client, calls };
}

describe('watchBenchmark', () => {
  it('yields each read, waits the interval between reads, and ends after the complete session', async () => {
    const { client, calls } = clientAnswering([session('running'), session('running'), session('complete'), session('complete')]);
    const seen: string[] = [];
    for await (const next of watchBenchmark(client, 'id', { intervalMs: 40 })) seen.push(next.status);
    expect(seen).toEqual(['running', 'running', 'complete']);
    expect(calls).toHaveLength(3);
    expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(35);
  });

  it('throws a FolioError when a read fails, and an abort ends it quietly during the wait', async () => {
    const failing = clientAnswering([new Error('socket hang up')]);
    await expect(watchBenchmark(failing.client, 'id').next()).rejects.toBeInstanceOf(FolioError);

    const { client, calls } = clientAnswering([session('running'), session('running')]);
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const next of watchBenchmark(client, 'id', { intervalMs: 60_000, signal: controller.signal })) {
      seen.push(next.status);
      controller.abort();
    }
    expect(seen).toEqual(['running']);
    expect(calls).toHaveLength(1);
  });
});
