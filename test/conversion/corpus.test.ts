import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import type { AuditFinding } from '../../server/conversion/audit/audit-html.ts';
import type { ConversionEngine, ConversionOutputs } from '../../server/conversion/engine.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { Block, PageResult } from '../../server/conversion/model.ts';
import { isDomainError } from '../../server/errors.ts';
import { silentLog } from '../../server/log.ts';
import { CORPUS_DIR, htmlElements, htmlHeadings, htmlText, normaliseHeading, pdfjsRawText, readCorpus, type CorpusEntry } from '../helpers/corpus.ts';
import { agreedWords, hasPoppler, missingWords, pdftotextPages, trigramRecall, withoutRunningArtifacts, wordRecall, wordsOf } from '../helpers/poppler.ts';

/**
 * Every file of ../shared/corpus through the local engine, judged against
 * the PDF's own structure tree (tagged files, via the manifest) and against
 * pdftotext (untagged text files). One shared engine with two workers: the
 * machine has two cores, and files run one after another.
 */

const corpus = readCorpus();
const poppler = hasPoppler();
if (!poppler) console.warn('corpus test: pdftotext missing (apt-get install poppler-utils): word recall and reading order are skipped');

/** A text layer worth comparing: fewer characters than this is a label or garbage (no Unicode map). */
const MIN_TEXT_CHARS = 10;
const MIN_WORD_RECALL = 0.98;
/** pdftotext's word trigrams found in ours: interleaved columns measure 0.71–0.81, a right order 0.99. */
const MIN_TRIGRAM_RECALL = 0.9;
const MIN_ORDER_WORDS = 50;

let engine: ConversionEngine;
beforeAll(async () => {
  engine = createConversionEngine({ conversion: loadConfig().conversion, log: silentLog, poolSize: 2 });
});
afterAll(async () => {
  await engine?.close();
});

type Converted = { pages: PageResult[]; outputs: ConversionOutputs; html: string; text: string };

async function convert(entry: CorpusEntry): Promise<Converted> {
  const bytes = new Uint8Array(await readFile(entry.path));
  const meta = await engine.inspect(bytes.slice(), { sourceName: entry.file });
  expect(meta.pageCount).toBe(entry.pages);
  const pages: PageResult[] = [];
  const numbers = Array.from({ length: meta.pageCount }, (_, i) => i + 1);
  for (let offset = 0; offset < numbers.length; offset += 20) {
    pages.push(...(await engine.convertPages(bytes.slice(), { pages: numbers.slice(offset, offset + 20), backend: 'local', sourceName: entry.file })));
  }
  expect(pages.map((page) => page.page)).toEqual(numbers);
  const outputs = await engine.render({ meta, pages });
  return { pages, outputs, html: outputs.html, text: htmlText(outputs.html) };
}

async function inspectError(entry: CorpusEntry): Promise<string> {
  const bytes = new Uint8Array(await readFile(entry.path));
  try {
    await engine.inspect(bytes, { sourceName: entry.file });
  } catch (error) {
    return isDomainError(error) ? error.code : `not a DomainError: ${String(error)}`;
  }
  return 'no error';
}

const isText = (entry: CorpusEntry) => (entry.pdftotextChars ?? 0) >= MIN_TEXT_CHARS;
const isImageOnly = (entry: CorpusEntry) => entry.pages !== null && entry.pdftotextChars === 0;
/** generous: a hang, not a slow page, is what this catches */
const timeoutFor = (entry: CorpusEntry) => 30_000 + (entry.pages ?? 1) * (isImageOnly(entry) ? 60_000 : 1_000);

describe('shared corpus through the local engine', () => {
  it('the manifest lists every PDF in the folder', async () => {
    const files = (await readdir(CORPUS_DIR)).filter((name) => name.endsWith('.pdf')).sort();
    expect(corpus.map((entry) => entry.file).sort()).toEqual(files);
  });

  for (const entry of corpus) {
    // what each file is comes from the manifest, not from its name
    if (/\bencrypted\b/i.test(entry.exercises)) {
      it(`${entry.file}: PDF_ENCRYPTED`, async () => {
        expect(await inspectError(entry)).toBe('PDF_ENCRYPTED');
      });
      continue;
    }
    if (entry.pages === null) {
      it(`${entry.file}: PDF_MALFORMED`, async () => {
        expect(await inspectError(entry)).toBe('PDF_MALFORMED');
      });
      continue;
    }

    it(`${entry.file}: converts${entry.tagged ? ', tags kept' : isText(entry) ? ', text and order match pdftotext' : isImageOnly(entry) ? ', OCR' : ''}`, {
      timeout: timeoutFor(entry),
    }, async () => {
      const result = await convert(entry);
      expect(result.html).toMatch(/<html[^>]*\slang="[^"]+"/);
      expect(result.outputs.taggedPdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(result.outputs.report.pages).toBe(entry.pages);

      if (entry.tagged) checkTags(entry, result);
      if (!entry.tagged && isText(entry) && poppler) await checkText(entry, result);
      if (isImageOnly(entry)) {
        expect(
          result.pages.some((page) => page.ocr),
          'a page was OCRed',
        ).toBe(true);
        expect(wordsOf(result.text).length, 'OCR found words').toBeGreaterThanOrEqual(10);
      }
      // every HTML of a text PDF passes the audit, save for pictures nobody described: those fail it
      // honestly (the renderer leaves them without alt), and nothing else may
      if ((entry.pdftotextChars ?? 0) > 0) {
        const report = result.outputs.report;
        const undescribed = allBlocks(result.pages.flatMap((page) => page.blocks)).filter(
          (block) => block.kind === 'figure' && block.needsAlt && block.image,
        ).length;
        const violations = (report.audit as { violations?: AuditFinding[] } | undefined)?.violations ?? [];
        const others = violations.filter((violation) => violation.rule !== 'image-alt' && violation.rule !== 'folio-image-alt');
        const detail = JSON.stringify(report.audit ?? report).slice(0, 1500);
        if (undescribed === 0) expect(report.wcagStatus, detail).toBe('passed');
        else expect(others, detail).toEqual([]);
      }
    });
  }
});

describe('bad input beyond the corpus', () => {
  it('a truncated PDF is PDF_MALFORMED, a PDF with zero pages is PDF_NO_PAGES, text is NOT_A_PDF', async () => {
    const whole = await readFile(corpus.find((entry) => entry.file === 'multicolumn-latex.pdf')!.path);
    const zeroPages =
      '%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R /Size 3 >>\n%%EOF\n';
    const codes = [];
    for (const bytes of [whole.subarray(0, Math.floor(whole.length / 2)), Buffer.from(zeroPages, 'latin1'), Buffer.from('hello, not a pdf'), Buffer.alloc(0)]) {
      codes.push(
        await engine.inspect(new Uint8Array(bytes)).then(
          () => 'no error',
          (error: unknown) => (isDomainError(error) ? error.code : String(error)),
        ),
      );
    }
    expect(codes).toEqual(['PDF_MALFORMED', 'PDF_NO_PAGES', 'NOT_A_PDF', 'NOT_A_PDF']);
  });
});

function checkTags(entry: CorpusEntry, result: Converted) {
  // The author's headings, in order, with their levels; an empty heading tag has nothing to read and is dropped.
  const expected = entry.headings
    .filter((heading) => heading.text.trim() !== '')
    .map((heading) => ({ level: heading.level, text: normaliseHeading(heading.text) }));
  const produced = htmlHeadings(result.html);
  expect(subsequence(expected, produced), `headings ${JSON.stringify(produced)} should contain, in order, ${JSON.stringify(expected)}`).toBe(true);
  const counts = entry.elementCounts;
  if ((counts.L ?? 0) > 0) expect(htmlElements(result.html, 'main ul, main ol, ul, ol'), 'a list').toBeGreaterThan(0);
  if ((counts.Table ?? 0) > 0) expect(htmlElements(result.html, 'table'), 'a table').toBeGreaterThanOrEqual(counts.Table!);
  if ((counts.TH ?? 0) > 0) expect(htmlElements(result.html, 'th[scope]'), 'header cells with scope').toBeGreaterThan(0);
  if ((counts.Figure ?? 0) > 0) expect(htmlElements(result.html, 'img, figure, [role="img"]'), 'a figure').toBeGreaterThan(0);
}

/** Blocks with those nested in table cells and block quotes. */
function allBlocks(blocks: Block[]): Block[] {
  return blocks.flatMap((block) => [
    block,
    ...(block.kind === 'table' ? allBlocks(block.rows.flatMap((row) => row.flatMap((cell) => cell.blocks ?? []))) : []),
    ...(block.kind === 'blockquote' ? allBlocks(block.children) : []),
  ]);
}

function subsequence(expected: { level: number; text: string }[], produced: { level: number; text: string }[]): boolean {
  let at = 0;
  for (const heading of produced) {
    if (at < expected.length && heading.level === expected[at]!.level && heading.text === expected[at]!.text) at++;
  }
  return at === expected.length;
}

/**
 * Words for recall and order: runs of two or more letters. Numbers, single
 * letters and letter-digit mixes are formula material (indices, sub- and
 * superscripts), where extractors legitimately differ in order and spelling.
 */
const isProse = (word: string) => /^[\p{L}\p{M}]{2,}$/u.test(word);

async function checkText(entry: CorpusEntry, result: Converted) {
  const pdftotextWords = wordsOf(withoutRunningArtifacts(pdftotextPages(entry.path)).join('\n'));
  // only words pdf.js agrees on: where the two oracles differ (TeX symbol fonts) neither is ground truth
  const reference = agreedWords(pdftotextWords, wordsOf(await pdfjsRawText(entry.path))).filter(isProse);
  const ours = wordsOf(result.text);
  const recall = wordRecall(reference, ours);
  const detail = `${reference.length} prose words of ${pdftotextWords.length} pdftotext words, agreed by pdf.js; recall of all pdftotext words: ${wordRecall(pdftotextWords, ours).toFixed(3)}`;
  expect(recall, `word recall ${recall.toFixed(3)} (${detail}); missing e.g. ${missingWords(reference, ours).join(' ')}`).toBeGreaterThanOrEqual(
    MIN_WORD_RECALL,
  );
  // Order needs enough words to mean anything, and right-to-left text is excluded: pdftotext gives
  // its visual order, which reverses words, where we keep the logical order.
  const rtl = reference.filter((word) => /[\p{Script=Arabic}\p{Script=Hebrew}]/u.test(word)).length > reference.length / 2;
  if (reference.length < MIN_ORDER_WORDS || rtl) return;
  // the renderer's own words (a figure's "missing description" note) stand between the source's: not in the order
  const order = trigramRecall(reference, wordsOf(htmlText(result.html, { sourceOnly: true })).filter(isProse));
  expect(order, `reading order: ${order.toFixed(3)} of pdftotext's word trigrams found in order`).toBeGreaterThanOrEqual(MIN_TRIGRAM_RECALL);
}
