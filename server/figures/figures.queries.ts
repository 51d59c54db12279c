import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';
import type { FigureDescription } from '../conversion/figures.ts';

/** SQL of the figures area: the finished job whose pages hold a file's figures, and the descriptions stored for them. */

export const FinishedJob = z.object({
  jobId: z.uuid(),
  resultKey: z.string(),
  sourceKey: z.string(),
  originalName: z.string(),
  chunkKeys: z.array(z.string()),
  options: z.record(z.string(), z.unknown()),
});
export type FinishedJob = z.infer<typeof FinishedJob>;

/** The file's latest completed chunked conversion with its stored chunk results in page order; null when it has none. */
export function findFinishedJob(db: Pick<Database, 'maybeOne'>, fileId: string) {
  return db.maybeOne(sql.type(FinishedJob)`
    select j.id as "jobId", j.result_key as "resultKey", j.options, f.storage_key as "sourceKey", f.original_name as "originalName",
           coalesce((select array_agg(c.result_key order by c.chunk_index) from chunk_jobs c
                      where c.job_id = j.id and c.status = 'completed' and c.result_key is not null), '{}') as "chunkKeys"
      from large_conversion_jobs j join files f on f.id = j.file_id
     where j.file_id = ${fileId} and j.status = 'completed' and j.result_key is not null and f.storage_key is not null
     order by j.created_at desc
     limit 1`);
}

const DescriptionRow = z.object({ figureId: z.string(), alt: z.string().nullable(), decorative: z.boolean() });

export async function readDescriptions(db: Pick<Database, 'any'>, jobId: string): Promise<Map<string, FigureDescription>> {
  const rows = await db.any(sql.type(DescriptionRow)`
    select figure_id as "figureId", alt, decorative from figure_descriptions where job_id = ${jobId}`);
  return new Map(rows.map((row) => [row.figureId, row.decorative ? { decorative: true as const } : { alt: row.alt ?? '' }]));
}

export async function storeDescription(
  db: Pick<Database, 'query'>,
  input: { jobId: string; figureId: string; description: FigureDescription; userId: string },
): Promise<void> {
  const alt = input.description.decorative ? null : input.description.alt;
  const decorative = input.description.decorative === true;
  await db.query(sql.type(AnyRow)`
    insert into figure_descriptions (job_id, figure_id, alt, decorative, described_by)
    values (${input.jobId}, ${input.figureId}, ${alt}, ${decorative}, ${input.userId})
    on conflict (job_id, figure_id) do update
       set alt = excluded.alt, decorative = excluded.decorative, described_by = excluded.described_by, updated_at = now()`);
}

/** Serialises re-renders of one job: two descriptions saved at once must not leave the older render in the store. */
export function lockJobRender(db: Pick<Database, 'query'>, jobId: string) {
  return db.query(sql.type(AnyRow)`select pg_advisory_xact_lock(hashtextextended(${`figures:${jobId}`}, 0))`);
}
