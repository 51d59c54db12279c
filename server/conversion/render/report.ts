import type { ConversionReport } from '../engine.ts';
import type { Backend, Block, DocumentMeta, PageResult } from '../model.ts';
import type { AuditResult } from '../audit/audit-html.ts';
import { pageFigures } from '../figures.ts';
import { blocksText } from '../page-content.ts';
import { documentTitle, type HtmlWarning } from './html.ts';
import { escapeHtml, inlineText, validLang } from './text.ts';

type ReportWarning = { page: number; kind: string; message: string };

type ReportPage = {
  page: number;
  label: string;
  backend: Backend;
  classification: 'standard' | 'complex';
  reasons: string[];
  ocr: boolean;
  textLayerWords: number;
  warnings: string[];
  ms: number;
  costUsd: number;
  model?: string;
  promptHash?: string;
};

export type FolioReport = ConversionReport & {
  title: string;
  lang: string;
  sourceName: string;
  tagged: boolean;
  generatedAt: string;
  backends: Partial<Record<Backend, number>>;
  ocrPages: number;
  pageDetails: ReportPage[];
  /** figures nobody has described yet, by id: what `--alt` and PUT /api/files/:fileId/figures/:figureId take */
  figuresNeedingAlt: { id: string; page: number; caption?: string }[];
  warnings: ReportWarning[];
  audit: AuditResult;
  timings: { conversionMs: number; htmlMs: number; pdfMs: number; auditMs: number; renderMs: number };
  /** outputs left out on request (`--no-pdf`, `outputs: ['html']`) */
  skippedOutputs: 'taggedPdf'[];
  totals: {
    blocks: Record<string, number>;
    headings: number;
    words: number;
    figures: number;
    figuresMissingAlt: number;
    tables: number;
    formulas: number;
    warnings: number;
    violations: number;
  };
};

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Counts blocks by kind (nested ones too) and returns the words of their text. */
function countBlocks(blocks: Block[], counts: Record<string, number>): number {
  let words = 0;
  const listWords = (list: Extract<Block, { kind: 'list' }>): number =>
    list.items.reduce((sum, item) => sum + countWords(inlineText(item.content)) + (item.children ? listWords(item.children) : 0), 0);
  for (const block of blocks) {
    counts[block.kind] = (counts[block.kind] ?? 0) + 1;
    switch (block.kind) {
      case 'heading':
      case 'paragraph':
      case 'footnote':
        words += countWords(inlineText(block.content));
        break;
      case 'list':
        words += listWords(block);
        break;
      case 'table':
        words +=
          countWords(inlineText(block.caption)) +
          block.rows.reduce((sum, row) => sum + row.reduce((n, cell) => n + countWords(inlineText(cell.content)), 0), 0);
        break;
      case 'figure':
        words += countWords(inlineText(block.caption));
        break;
      case 'formula':
      case 'code':
        words += countWords(block.text);
        break;
      case 'blockquote':
        words += countBlocks(block.children, counts);
        break;
      case 'form':
        words += countWords(blocksText([block]));
        break;
      case 'pageBreak':
        break;
    }
  }
  return words;
}

/**
 * The report, gathered page by page as pages pass through the renderers, so a
 * long document's report needs its per-page summaries only, never its blocks.
 */
export function createReportBuilder() {
  const pages: ReportPage[] = [];
  const backends: Partial<Record<Backend, number>> = {};
  const warnings: ReportWarning[] = [];
  const blocks: Record<string, number> = {};
  const undescribed: FolioReport['figuresNeedingAlt'] = [];
  const unreadable: NonNullable<FolioReport['unreadablePages']> = [];
  let words = 0;
  let costUsd = 0;
  let conversionMs = 0;
  return {
    addPage(p: PageResult): void {
      backends[p.backend] = (backends[p.backend] ?? 0) + 1;
      if (p.ocr) warnings.push({ page: p.page, kind: 'ocr', message: `Page ${p.label} was recognised by OCR: check the text against the original` });
      if (p.reasons.includes('unreadable')) {
        unreadable.push({ page: p.page, label: p.label });
        warnings.push({
          page: p.page,
          kind: 'unreadable',
          message: `Page ${p.label} could not be read reliably and is shown as its picture: convert it with the vision backend`,
        });
      }
      for (const w of p.warnings) warnings.push({ page: p.page, kind: 'backend', message: w });
      words += countBlocks(p.blocks, blocks);
      for (const { id, figure } of pageFigures(p)) {
        if (figure.decorative || figure.alt?.trim()) continue;
        const caption = inlineText(figure.caption);
        undescribed.push({ id, page: p.page, ...(caption ? { caption } : {}) });
      }
      costUsd += Number.isFinite(p.costUsd) ? p.costUsd : 0;
      conversionMs += p.timings.ms;
      pages.push({
        page: p.page,
        label: p.label,
        backend: p.backend,
        classification: p.classification,
        reasons: p.reasons,
        ocr: p.ocr,
        textLayerWords: p.textLayerWords,
        warnings: p.warnings,
        ms: Math.round(p.timings.ms),
        costUsd: p.costUsd,
        ...(p.model ? { model: p.model } : {}),
        ...(p.promptHash ? { promptHash: p.promptHash } : {}),
      });
    },
    build(
      meta: DocumentMeta,
      audit: AuditResult,
      htmlWarnings: HtmlWarning[],
      headings: number,
      timings: { htmlMs: number; pdfMs: number; auditMs: number; renderMs: number },
      skippedOutputs: 'taggedPdf'[] = [],
    ): FolioReport {
      const all = [...warnings, ...htmlWarnings].sort((a, b) => a.page - b.page);
      return {
        wcagStatus: audit.wcagStatus,
        pages: pages.length,
        standardPages: pages.filter((p) => p.classification === 'standard').length,
        complexPages: pages.filter((p) => p.classification === 'complex').length,
        costUsd: Math.round(costUsd * 1e6) / 1e6,
        title: documentTitle(meta),
        lang: validLang(meta.lang) ?? 'en',
        sourceName: meta.sourceName,
        tagged: meta.tagged,
        generatedAt: new Date().toISOString(),
        backends: { ...backends },
        ocrPages: pages.filter((p) => p.ocr).length,
        pageDetails: pages,
        figuresNeedingAlt: [...undescribed],
        unreadablePages: [...unreadable],
        warnings: all,
        audit,
        timings: { conversionMs: Math.round(conversionMs), ...timings },
        skippedOutputs,
        totals: {
          blocks: { ...blocks },
          headings,
          words,
          figures: blocks.figure ?? 0,
          figuresMissingAlt: htmlWarnings.filter((w) => w.kind === 'missing-alt').length,
          tables: blocks.table ?? 0,
          formulas: blocks.formula ?? 0,
          warnings: all.length,
          violations: audit.violationCount,
        },
      };
    },
  };
}

const REPORT_CSS = `:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfc; --muted: #555; --line: #c8c8c8; --ok: #0b6b2b; --bad: #a4161a; --link: #0645ad; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e6e3; --bg: #161616; --muted: #b0b0b0; --line: #4a4a4a; --ok: #7ee2a0; --bad: #ff9b9b; --link: #8ab4f8; } }
body { margin: 0 auto; padding: 1rem; max-width: 60rem; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; line-height: 1.5; color: var(--fg); background: var(--bg); }
a { color: var(--link); } a:focus-visible, [tabindex]:focus-visible { outline: 0.1875rem solid #b8520a; outline-offset: 0.125rem; }
.skip-link { position: absolute; left: 0.5rem; top: -10rem; } .skip-link:focus { top: 0.5rem; }
.status-passed { color: var(--ok); font-weight: 700; } .status-failed { color: var(--bad); font-weight: 700; }
.table-wrap { overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; } caption { text-align: start; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 0.0625rem solid var(--line); padding: 0.25rem 0.5rem; text-align: start; vertical-align: top; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; } dt { font-weight: 600; } dd { margin: 0; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.9rem; }`;

function table(caption: string, head: string[], rows: string[][]): string {
  if (rows.length === 0) return `<p>None.</p>`;
  return `<div class="table-wrap" role="region" aria-label="${escapeHtml(caption)}" tabindex="0"><table>\n<caption>${escapeHtml(caption)}</caption>\n<thead><tr>${head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('')}</tr></thead>\n<tbody>\n${rows
    .map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${c}</th>` : `<td>${c}</td>`)).join('')}</tr>`)
    .join('\n')}\n</tbody></table></div>`;
}

/** The same report as a readable, accessible page. */
export function renderReportHtml(report: FolioReport): string {
  const e = (v: unknown) => escapeHtml(String(v ?? ''));
  const summary = `<dl>
<dt>WCAG 2.1 A/AA status</dt><dd><span class="status-${e(report.wcagStatus)}">${report.wcagStatus === 'passed' ? 'Passed' : 'Failed'}</span> (${e(report.audit.violationCount)} violations in ${e(report.audit.violations.length)} rules)</dd>
<dt>Source</dt><dd>${e(report.sourceName)}</dd>
<dt>Language</dt><dd>${e(report.lang)}</dd>
<dt>Tagged source PDF</dt><dd>${report.tagged ? 'Yes' : 'No'}</dd>
<dt>Pages</dt><dd>${e(report.pages)} (${e(report.standardPages)} standard, ${e(report.complexPages)} complex, ${e(report.ocrPages)} OCR)</dd>${
    report.unreadablePages?.length
      ? `\n<dt>Could not be read</dt><dd>${e(report.unreadablePages.map((p) => p.label).join(', '))}: shown as pictures; convert with the vision backend</dd>`
      : ''
  }
<dt>Backends</dt><dd>${e(
    Object.entries(report.backends)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || 'none',
  )}</dd>
<dt>Cost</dt><dd>$${e(report.costUsd.toFixed(4))}</dd>
<dt>Time</dt><dd>conversion ${e(report.timings.conversionMs)} ms, HTML ${e(report.timings.htmlMs)} ms, tagged PDF ${report.skippedOutputs?.includes('taggedPdf') ? 'skipped' : `${e(report.timings.pdfMs)} ms`}, audit ${e(report.timings.auditMs)} ms</dd>
<dt>Tagged PDF</dt><dd>${report.skippedOutputs?.includes('taggedPdf') ? 'Not made: HTML only was asked for' : 'Made'}</dd>
<dt>Content</dt><dd>${e(report.totals.headings)} headings, ${e(report.totals.tables)} tables, ${e(report.totals.figures)} figures (${e(report.totals.figuresMissingAlt)} without description), ${e(report.totals.formulas)} formulas, about ${e(report.totals.words)} words</dd>
</dl>`;
  const audit = table(
    'Audit findings by rule',
    ['Rule', 'Checker', 'Impact', 'WCAG', 'Count', 'Description'],
    report.audit.violations.map((v) => [
      v.helpUrl ? `<a href="${e(v.helpUrl)}">${e(v.rule)}</a>` : e(v.rule),
      e(v.source === 'axe' ? 'axe-core' : 'Folio'),
      e(v.impact ?? ''),
      e(v.wcag.join(', ')),
      e(v.count),
      e(v.description),
    ]),
  );
  const disabled = report.audit.disabledRules.map((d) => `<li><code>${e(d.rule)}</code>: ${e(d.reason)}</li>`).join('');
  const warnings = table(
    'Warnings',
    ['Page', 'Kind', 'Message'],
    report.warnings.map((w) => [e(w.page), e(w.kind), e(w.message)]),
  );
  const pages = table(
    'Pages',
    ['Page', 'Label', 'Backend', 'Class', 'Reasons', 'OCR', 'Words', 'Time (ms)', 'Cost (USD)'],
    report.pageDetails.map((p) => [
      e(p.page),
      e(p.label),
      e(p.backend),
      e(p.classification),
      e(p.reasons.join(', ') || '—'),
      p.ocr ? 'Yes' : 'No',
      e(p.textLayerWords),
      e(p.ms),
      e(p.costUsd.toFixed(4)),
    ]),
  );
  const title = `Conversion report: ${report.title}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<style>
${REPORT_CSS}
</style>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header><p>Folio conversion report</p></header>
<main id="main" tabindex="-1">
<h1>${e(title)}</h1>
<section aria-labelledby="s-summary"><h2 id="s-summary">Summary</h2>
${summary}
</section>
<section aria-labelledby="s-audit"><h2 id="s-audit">Accessibility audit</h2>
<p>Checked with ${e(report.audit.engine)} (rules tagged ${e(report.audit.tags.join(', '))}) and Folio's structural checks, in ${e(report.audit.ms)} ms.</p>
${audit}
${disabled ? `<p>Not checked automatically:</p><ul>${disabled}</ul>` : ''}
${report.audit.incomplete.length ? `<p>Needs manual review: ${e(report.audit.incomplete.map((i) => `${i.rule} (${i.count})`).join(', '))}.</p>` : ''}
</section>
<section aria-labelledby="s-warnings"><h2 id="s-warnings">Warnings</h2>
${warnings}
</section>
<section aria-labelledby="s-pages"><h2 id="s-pages">Pages</h2>
${pages}
</section>
</main>
<footer><p>Generated ${e(report.generatedAt)} by Folio.</p></footer>
</body>
</html>
`;
}
