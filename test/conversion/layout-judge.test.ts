import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { ConversionEngine } from '../../server/conversion/engine.ts';
import { silentLog } from '../../server/log.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { hasPoppler } from '../helpers/poppler.ts';

/**
 * The layout set through the engine, judged from outside by
 * ../shared/tools/judge.mjs against Docling's text of each page: 4-gram
 * recall (reading order, sentences in one piece) and word precision (running
 * heads, page numbers and noise that should not be there). The aims
 * are 0.95 and 0.97 (0.9 for right-to-left pages); the floors below are where
 * the engine stands, raised as it improves and never lowered. The reference
 * itself is wrong in places (README, Layout): the floors are not the aims.
 */

const LAYOUT = path.join(CORPUS_DIR, 'layout');
const JUDGE = path.resolve(CORPUS_DIR, '../tools/judge.mjs');
const FLOORS: Record<string, { fourgramRecall: number; wordPrecision: number }> = {
  // the table's OTSL and HTML rows are rows of their own now, each layer pair spanning both (test/fixtures/layout-set):
  // Docling's reference runs them together in one cell, so its 4-grams over the table no longer match (README, Layout);
  // the text outside the table matches it in full (4-gram recall 1.0 with the table's rows left out of both)
  '2305.03393v1-pg9.pdf': { fourgramRecall: 0.75, wordPrecision: 0.995 },
  'code_and_formula.pdf': { fourgramRecall: 0.95, wordPrecision: 0.99 },
  'multi_page.pdf': { fourgramRecall: 0.99, wordPrecision: 0.99 },
  'picture_classification.pdf': { fourgramRecall: 0.99, wordPrecision: 0.99 },
  'redp5110_sampled.pdf': { fourgramRecall: 0.955, wordPrecision: 0.905 },
  'right_to_left_02.pdf': { fourgramRecall: 0.91, wordPrecision: 0.84 },
  // its two header lines are /Artifact (Pagination, Header) in the file: Docling reads them, we leave them out (README, Layout)
  'right_to_left_03.pdf': { fourgramRecall: 0.855, wordPrecision: 0.995 },
  // the reference numbers the check-box items of questions 25-27 "2." to "14." (the page shows boxes, no numbers) and
  // reads each bullet of the table's first column twice ("y y"): with those two put right, recall is near 1 (a table
  // without a caption is named "Table 1" for screen readers only, no longer as visible text)
  'table_mislabeled_as_picture.pdf': { fourgramRecall: 0.86, wordPrecision: 0.995 },
};

const usable = hasPoppler() && existsSync(JUDGE);
if (!usable) console.warn('layout judge test: pdftotext or ../shared/tools/judge.mjs missing; skipped');

let engine: ConversionEngine;
let out: string;
beforeAll(() => {
  engine = createConversionEngine({ conversion: loadConfig().conversion, log: silentLog, poolSize: 2 });
  out = mkdtempSync(path.join(tmpdir(), 'folio-layout-judge-'));
});
afterAll(async () => {
  await engine?.close();
  rmSync(out, { recursive: true, force: true });
});

async function judge(file: string): Promise<{ fourgramRecall: number; wordPrecision: number }> {
  const pdf = path.join(LAYOUT, file);
  const bytes = new Uint8Array(readFileSync(pdf));
  const meta = await engine.inspect(bytes.slice(), { sourceName: file });
  const pages = await engine.convertPages(bytes.slice(), {
    pages: Array.from({ length: meta.pageCount }, (_, index) => index + 1),
    backend: 'local',
    sourceName: file,
  });
  const html = path.join(out, file.replace(/\.pdf$/, '.html'));
  writeFileSync(html, (await engine.render({ meta, pages })).html);
  const reference = pdf.replace(/\.pdf$/, '.docling.md');
  const line = execFileSync(process.execPath, [JUDGE, pdf, html, '--ref', reference], { cwd: path.resolve(import.meta.dirname, '../..'), encoding: 'utf8' });
  return (JSON.parse(line) as { ref: { fourgramRecall: number; wordPrecision: number } }).ref;
}

describe.skipIf(!usable)('layout set judged against its references', () => {
  for (const [file, floor] of Object.entries(FLOORS)) {
    it(`${file}: 4-gram recall and word precision at least where the engine stands`, { timeout: 180_000 }, async () => {
      const got = await judge(file);
      console.info(`layout judge ${file}: ${JSON.stringify(got)}`);
      expect(got.fourgramRecall).toBeGreaterThanOrEqual(floor.fourgramRecall);
      expect(got.wordPrecision).toBeGreaterThanOrEqual(floor.wordPrecision);
    });
  }
});
