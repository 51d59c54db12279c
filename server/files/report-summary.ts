import { z } from 'zod';
import type { ObjectStore } from '../storage/storage.ts';
import { readZipEntryText } from '../storage/zip-entry.ts';

/** The report is read only for its summary; a larger one is not summarised. */
const MAX_REPORT_BYTES = 2 * 1024 * 1024;

export const ReportSummary = z.object({
  wcagStatus: z.string().optional(),
  pages: z.number().optional(),
  standardPages: z.number().optional(),
  complexPages: z.number().optional(),
  findings: z.array(z.unknown()).optional(),
});
export type ReportSummary = z.infer<typeof ReportSummary>;

/** The conversion report's summary fields from a result zip; empty when the zip, the report or its shape is missing. */
export async function readReportSummary(store: ObjectStore, resultKey: string): Promise<ReportSummary> {
  try {
    const text = await readZipEntryText(store, resultKey, (name) => name.endsWith('.report.json'), MAX_REPORT_BYTES);
    const parsed = text ? ReportSummary.safeParse(JSON.parse(text)) : undefined;
    return parsed?.success ? parsed.data : {};
  } catch {
    return {};
  }
}
