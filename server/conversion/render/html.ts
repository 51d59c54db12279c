import katex from 'katex';
import type { Block, ConvertedDocument, DocumentMeta, Inline, ListBlock, PageResult, TableCell } from '../model.ts';
import { describePage } from '../figures.ts';
import { createDocumentHeadings, withHeadingLevels } from '../heading-levels.ts';
import { joinBrokenParagraphs } from '../paragraphs.ts';
import { escapeHtml, idToken, inlineText, isRtl, safeHref, validLang } from './text.ts';
import { BoundedCache } from '../bounded-cache.ts';

export type HtmlWarning = { page: number; kind: 'missing-alt' | 'table-without-headers' | 'uncertain-table' | 'inferred-table-headers'; message: string };

export type HtmlRender = {
  html: string;
  warnings: HtmlWarning[];
  /** headings as rendered, after level repair */
  headings: { level: number; text: string; id: string }[];
  /** html = shell.before + mainParts.join('\n') + shell.after; parts are top-level blocks of <main>, so the audit can take a long document in slices */
  shell: { before: string; after: string };
  mainParts: string[];
};

type Ctx = {
  warnings: HtmlWarning[];
  headings: { level: number; text: string; id: string }[];
  usedIds: Set<string>;
  footnoteRefs: Set<string>;
  footnoteTargets: Set<string>;
  tableCount: number;
  figureCount: number;
  markedPages: Set<string>;
};

function uniqueId(ctx: Ctx, wanted: string): string {
  let id = wanted;
  for (let n = 2; ctx.usedIds.has(id); n++) id = `${wanted}-${n}`;
  ctx.usedIds.add(id);
  return id;
}

function langAttrs(lang: string | undefined): string {
  const valid = validLang(lang);
  if (!valid) return '';
  return ` lang="${escapeHtml(valid)}"${isRtl(valid) ? ' dir="rtl"' : ''}`;
}

/** Mathematical alphanumerics (U+1D400–U+1D7FF): letters and digits set in a Unicode math face (Word's equations, unicode-math). */
const MATH_ALPHANUMERICS = /[\u{1D400}-\u{1D7FF}]+/gu;

/**
 * Text, escaped, with a math face's letters as the letters they are: a screen reader spells "𝑛 > 2" out as
 * "mathematical italic small n greater than 2", and a search for "n" misses it. Letters become a variable (<var>,
 * italic as drawn), digits plain digits.
 */
function textHtml(text: string): string {
  return escapeHtml(text).replace(MATH_ALPHANUMERICS, (run) => {
    const plain = run.normalize('NFKC');
    return /\p{L}/u.test(plain) ? `<var>${plain}</var>` : plain;
  });
}

function renderInline(ctx: Ctx, content: Inline[] | undefined): string {
  if (!content) return '';
  let out = '';
  for (const node of content) {
    switch (node.kind) {
      case 'text':
        out += textHtml(node.text);
        break;
      case 'emphasis':
        out += node.strong ? `<strong>${renderInline(ctx, node.children)}</strong>` : `<em>${renderInline(ctx, node.children)}</em>`;
        break;
      case 'link': {
        const href = safeHref(node.href);
        let inner = renderInline(ctx, node.children);
        if (!href) {
          out += inner;
          break;
        }
        // A link with no text has no name for a screen reader; the address is the honest name.
        if (inlineText(node.children) === '') inner = escapeHtml(href);
        out += `<a href="${escapeHtml(href)}">${inner}</a>`;
        break;
      }
      case 'lang': {
        const attrs = langAttrs(node.lang);
        out += attrs ? `<span${attrs}>${renderInline(ctx, node.children)}</span>` : renderInline(ctx, node.children);
        break;
      }
      case 'code':
        out += `<code>${escapeHtml(node.text)}</code>`;
        break;
      case 'math': {
        const mathml = mathmlFromTex(node.tex, false);
        out += (mathml && renderMathml(mathml, node.tex, false, node.text)) ?? escapeHtml(node.text);
        break;
      }
      case 'footnoteRef': {
        const token = idToken(node.id);
        const first = !ctx.footnoteRefs.has(token);
        ctx.footnoteRefs.add(token);
        const idAttr = first ? ` id="fnref-${escapeHtml(token)}"` : '';
        out += `<sup><a href="#fn-${escapeHtml(token)}"${idAttr} role="doc-noteref" aria-label="Footnote ${escapeHtml(node.label)}">${escapeHtml(node.label)}</a></sup>`;
        break;
      }
      case 'lineBreak':
        out += '<br>';
        break;
      case 'pageBreak':
        out += pageMarker(ctx, node.label).trimEnd();
        break;
    }
  }
  return out;
}

function pageMarker(ctx: Ctx, label: string): string {
  const id = `page-${idToken(label)}`;
  if (ctx.markedPages.has(id)) return '';
  ctx.markedPages.add(id);
  ctx.usedIds.add(id);
  // axe-core 4.14 reports aria-label on a span/div with role doc-pagebreak as prohibited (aria-prohibited-attr);
  // title names the separator just as well and passes.
  return `<span class="pagebreak" role="doc-pagebreak" id="${escapeHtml(id)}" title="Page ${escapeHtml(label)}"></span>\n`;
}

function renderList(ctx: Ctx, list: ListBlock): string {
  const tag = list.ordered ? 'ol' : 'ul';
  const start = list.ordered && list.start !== undefined && list.start !== 1 ? ` start="${Math.trunc(list.start)}"` : '';
  const items = list.items.map((item) => `<li>${renderInline(ctx, item.content)}${item.children ? `\n${renderList(ctx, item.children)}` : ''}</li>`).join('\n');
  return `<${tag}${start}>\n${items}\n</${tag}>`;
}

function cellScope(cell: TableCell, rowIndex: number, colIndex: number, headerRows: number): string {
  if (cell.scope) return cell.scope;
  if (rowIndex < headerRows) return (cell.colSpan ?? 1) > 1 ? 'colgroup' : 'col';
  if (colIndex === 0) return (cell.rowSpan ?? 1) > 1 ? 'rowgroup' : 'row';
  return 'col';
}

function renderTable(ctx: Ctx, block: Extract<Block, { kind: 'table' }>): string {
  ctx.tableCount++;
  const rows = block.rows.filter((row) => row.length > 0);
  const captionText = inlineText(block.caption);
  const label = captionText !== '' ? captionText : `Table ${ctx.tableCount}`;
  // a table the page gives no caption is named for screen readers only: a visible "Table 3" would be text the
  // document does not have (and may clash with its own "Table 3")
  const named = captionText !== '' ? `<table>\n<caption>${renderInline(ctx, block.caption)}</caption>\n` : `<table aria-label="${escapeHtml(label)}">\n`;
  let headerRows = 0;
  while (headerRows < rows.length && rows[headerRows]!.every((cell) => cell.header)) headerRows++;
  if (headerRows === rows.length) headerRows = Math.min(headerRows, 1);
  const hasHeaders = rows.some((row) => row.some((cell) => cell.header));
  if (!hasHeaders) ctx.warnings.push({ page: block.page, kind: 'table-without-headers', message: `${label} on page ${block.page} has no header cells` });
  if (block.uncertain)
    ctx.warnings.push({
      page: block.page,
      kind: 'uncertain-table',
      message: `${label} on page ${block.page}: structure inferred with low confidence, please review`,
    });
  const renderRow = (row: TableCell[], rowIndex: number) =>
    `<tr>${row
      .map((cell, colIndex) => {
        const span = `${(cell.rowSpan ?? 1) > 1 ? ` rowspan="${Math.trunc(cell.rowSpan!)}"` : ''}${(cell.colSpan ?? 1) > 1 ? ` colspan="${Math.trunc(cell.colSpan!)}"` : ''}`;
        const content = cell.blocks?.length
          ? cell.blocks
              .map((inner) => renderBlock(ctx, inner))
              .filter(Boolean)
              .join('\n')
          : renderInline(ctx, cell.content);
        return cell.header ? `<th scope="${cellScope(cell, rowIndex, colIndex, headerRows)}"${span}>${content}</th>` : `<td${span}>${content}</td>`;
      })
      .join('')}</tr>`;
  const head = rows
    .slice(0, headerRows)
    .map((row, i) => renderRow(row, i))
    .join('\n');
  const body = rows
    .slice(headerRows)
    .map((row, i) => renderRow(row, i + headerRows))
    .join('\n');
  return (
    `<div class="table-wrap" role="region" aria-label="${escapeHtml(label)}" tabindex="0">\n${named}` +
    (head ? `<thead>\n${head}\n</thead>\n` : '') +
    `<tbody>\n${body}\n</tbody>\n</table>\n</div>`
  );
}

function renderFigure(ctx: Ctx, block: Extract<Block, { kind: 'figure' }>): string {
  ctx.figureCount++;
  const caption = inlineText(block.caption) !== '' ? `<figcaption>${renderInline(ctx, block.caption)}</figcaption>` : '';
  const alt = block.alt?.trim();
  const src = block.image ? `data:${block.image.mime};base64,${block.image.base64.replace(/[^A-Za-z0-9+/=]/g, '')}` : undefined;
  const size =
    block.image && block.image.width > 0 && block.image.height > 0
      ? ` width="${Math.round(block.image.width)}" height="${Math.round(block.image.height)}"`
      : '';
  if (block.decorative && !caption) {
    return src ? `<img class="decorative" src="${src}" alt="" role="presentation"${size}>` : '';
  }
  let img = '';
  let note = '';
  if (alt) {
    img = src
      ? `<img src="${src}" alt="${escapeHtml(alt)}"${size}>`
      : `<p class="figure-text" role="img" aria-label="${escapeHtml(alt)}">${escapeHtml(alt)}</p>`;
  } else if (block.decorative) {
    img = src ? `<img src="${src}" alt="" role="presentation"${size}>` : '';
  } else {
    // No text alternative exists: say so visibly and leave the image without alt, so the audit fails honestly.
    ctx.warnings.push({ page: block.page, kind: 'missing-alt', message: `Figure ${ctx.figureCount} on page ${block.page} has no text alternative` });
    img = src ? `<img src="${src}" data-needs-alt="true"${size}>` : '';
    note = `<p class="needs-alt" data-needs-alt="true"><strong>Missing image description.</strong> Figure ${ctx.figureCount} on page ${escapeHtml(String(block.page))} has no text alternative yet.</p>`;
  }
  // words drawn in the picture (axis labels, a legend): there for whoever needs them, folded away from the reading flow
  const drawn = block.text?.trim() ? `<details class="figure-text"><summary>Text in the figure</summary><p>${escapeHtml(block.text.trim())}</p></details>` : '';
  return `<figure>\n${img}${note}${drawn}${caption}\n</figure>`;
}

const MATHML_ELEMENTS = new Set([
  'math',
  'semantics',
  'annotation',
  'annotation-xml',
  'mrow',
  'mi',
  'mn',
  'mo',
  'ms',
  'mtext',
  'mspace',
  'mglyph',
  'mfrac',
  'msqrt',
  'mroot',
  'mstyle',
  'merror',
  'mpadded',
  'mphantom',
  'mfenced',
  'menclose',
  'msub',
  'msup',
  'msubsup',
  'munder',
  'mover',
  'munderover',
  'mmultiscripts',
  'mprescripts',
  'none',
  'mtable',
  'mtr',
  'mlabeledtr',
  'mtd',
  'maligngroup',
  'malignmark',
  'mlongdiv',
  'mstack',
  'msgroup',
  'msrow',
  'mscarries',
  'mscarry',
  'msline',
  'maction',
]);

/**
 * MathML from a backend is markup we did not write: keep MathML elements
 * only, drop scripts and styles with their content, event handlers and
 * links. Returns undefined when what remains is not one <math> element.
 */
function sanitizeMathml(mathml: string): string | undefined {
  let out = mathml
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|iframe|object|embed|foreignObject|svg)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<\/?([a-zA-Z][\w:.-]*)\b[^>]*>/g, (tag, name: string) => (MATHML_ELEMENTS.has(name.toLowerCase().replace(/^m:/, '')) ? tag : ''));
  out = out.replace(/\s(on[a-z]+|href|src|xlink:href|style)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '').trim();
  return /^<math\b[^>]*>[\s\S]*<\/math>$/i.test(out) ? out : undefined;
}

function renderMathml(mathml: string, tex: string | undefined, display: boolean, text: string): string | undefined {
  const cleaned = sanitizeMathml(mathml);
  if (!cleaned) return undefined;
  const open = /^<math\b([^>]*)>/i.exec(cleaned)!;
  let attrs = open[1] ?? '';
  if (!/\sxmlns=/.test(attrs)) attrs += ' xmlns="http://www.w3.org/1998/Math/MathML"';
  if (display && !/\sdisplay=/.test(attrs)) attrs += ' display="block"';
  if (!/\salttext=/.test(attrs) && text) attrs += ` alttext="${escapeHtml(text)}"`;
  let inner = cleaned.slice(open[0].length).replace(/<\/math>$/i, '');
  if (tex && !/<annotation\b[^>]*application\/x-tex/i.test(inner)) {
    const annotation = `<annotation encoding="application/x-tex">${escapeHtml(tex)}</annotation>`;
    const close = inner.toLowerCase().lastIndexOf('</semantics>');
    if (/^\s*<semantics\b/i.test(inner) && close >= 0) inner = `${inner.slice(0, close)}${annotation}${inner.slice(close)}`;
    else inner = `<semantics><mrow>${inner}</mrow>${annotation}</semantics>`;
  }
  return `<math${attrs}>${inner}</math>`;
}

/**
 * MathML laid out from TeX by KaTeX (with the TeX as its annotation), or
 * undefined when KaTeX cannot read the TeX: a formula then keeps its text.
 */
function mathmlFromTex(tex: string, display: boolean): string | undefined {
  // a document's prose names its few variables again and again: each is laid out once
  return laidOut.get(`${display ? 'display' : 'inline'} ${tex}`, () => katexMathml(tex, display));
}

const laidOut = new BoundedCache<string, string | undefined>(5_000);

function katexMathml(tex: string, display: boolean): string | undefined {
  try {
    const html = katex.renderToString(tex, {
      output: 'mathml',
      throwOnError: true,
      displayMode: display,
      strict: 'ignore',
      trust: false,
      maxSize: 50,
      maxExpand: 200,
    });
    return /<math[\s\S]*<\/math>/.exec(html)?.[0];
  } catch {
    return undefined;
  }
}

function renderFormula(block: Extract<Block, { kind: 'formula' }>): string {
  const text = block.text.trim() || block.tex?.trim() || '';
  // TeX without MathML becomes MathML through KaTeX; TeX KaTeX cannot read travels as an annotation on the formula's text
  const fromTex = !block.mathml && block.tex?.trim() ? mathmlFromTex(block.tex.trim(), block.display) : undefined;
  const mathml = block.mathml ?? fromTex ?? (block.tex?.trim() && text ? `<math><mtext>${escapeHtml(text)}</mtext></math>` : undefined);
  const math = mathml ? renderMathml(mathml, block.tex, block.display, text) : undefined;
  const body = math ?? `<span class="math" role="math" aria-label="${escapeHtml(text || 'formula')}">${escapeHtml(text || block.tex || '')}</span>`;
  return block.display ? `<div class="formula">${body}</div>` : `<p class="formula">${body}</p>`;
}

function renderBlock(ctx: Ctx, block: Block): string {
  switch (block.kind) {
    case 'heading': {
      const level = block.level;
      const text = inlineText(block.content);
      const id = uniqueId(ctx, block.id ? idToken(block.id) : `h-${ctx.headings.length + 1}`);
      ctx.headings.push({ level, text, id });
      return `<h${level} id="${escapeHtml(id)}">${renderInline(ctx, block.content)}</h${level}>`;
    }
    case 'paragraph': {
      const inner = renderInline(ctx, block.content);
      return inner.trim() === '' ? '' : `<p>${inner}</p>`;
    }
    case 'list':
      return block.items.length === 0 ? '' : renderList(ctx, block);
    case 'table':
      return renderTable(ctx, block);
    case 'figure':
      return renderFigure(ctx, block);
    case 'formula':
      return renderFormula(block);
    case 'footnote': {
      const token = idToken(block.id);
      ctx.footnoteTargets.add(token);
      const id = uniqueId(ctx, `fn-${token}`);
      const back = ctx.footnoteRefs.has(token)
        ? ` <a href="#fnref-${escapeHtml(token)}" role="doc-backlink" aria-label="Back to reference ${escapeHtml(block.label)}">↩</a>`
        : '';
      return `<div class="footnote" role="doc-footnote" id="${escapeHtml(id)}"><p><span class="fn-label">${escapeHtml(block.label)}</span> ${renderInline(ctx, block.content)}${back}</p></div>`;
    }
    case 'blockquote':
      return `<blockquote>\n${block.children
        .map((child) => renderBlock(ctx, child))
        .filter(Boolean)
        .join('\n')}\n</blockquote>`;
    case 'code':
      return `<pre tabindex="0"><code>${escapeHtml(block.text)}</code></pre>`;
    case 'form':
      return renderForm(block);
    case 'pageBreak':
      return pageMarker(ctx, block.label || String(block.page)).trimEnd();
  }
}

/**
 * Form fields as a definition list: each label, then what was filled in. A
 * converted document cannot submit, so live controls would only invite
 * typing that goes nowhere; the list reads the same in every screen reader
 * and keeps the values in the text, where search and copy find them.
 */
function renderForm(block: Extract<Block, { kind: 'form' }>): string {
  const entries = block.fields.map((field) => {
    let value: string;
    if (field.kind === 'checkbox') value = `<span aria-hidden="true">${field.checked ? '☑' : '☐'} </span>${field.checked ? 'Checked' : 'Not checked'}`;
    else value = field.value ? escapeHtml(field.value) : '<span class="form-empty">(empty)</span>';
    const choices =
      (field.kind === 'radio' || field.kind === 'choice') && field.options.length > 1
        ? ` <span class="form-options">(options: ${escapeHtml(field.options.join(', '))})</span>`
        : '';
    const lines = field.kind === 'text' && field.multiline && field.value ? value.replace(/\n/g, '<br>') : value;
    return `<dt>${escapeHtml(field.label)}</dt><dd>${lines}${choices}</dd>`;
  });
  return `<div class="form-fields" role="group" aria-label="Form fields on page ${block.page}">\n<dl>\n${entries.join('\n')}\n</dl>\n</div>`;
}

function renderToc(headings: HtmlRender['headings']): string {
  const entries = headings.filter((h) => h.level <= 3);
  const base = entries[0]?.level ?? 1;
  let out = '';
  let depth = 0;
  for (const h of entries) {
    const level = Math.min(Math.max(1, h.level - base + 1), depth + 1);
    if (level > depth) {
      out += '<ol>';
      depth++;
    } else {
      out += '</li>';
      while (depth > level) {
        out += '</ol></li>';
        depth--;
      }
    }
    out += `<li><a href="#${escapeHtml(h.id)}">${escapeHtml(h.text || 'Untitled section')}</a>`;
  }
  while (depth > 0) {
    out += '</li></ol>';
    depth--;
  }
  return `<nav class="toc" aria-label="Table of contents">\n<p class="toc-title">Contents</p>\n${out}\n</nav>`;
}

export function documentTitle(meta: DocumentMeta): string {
  const title = meta.title?.trim();
  if (title) return title;
  const source = meta.sourceName?.trim().replace(/\.pdf$/i, '');
  return source || 'Untitled document';
}

type Level = 1 | 2 | 3 | 4 | 5 | 6;

/**
 * A table with no header cell at all whose first row reads like labels (every
 * cell has text, none is a number) gets that row as column headers: authors
 * and extractors often miss the TH tag, and a screen reader user otherwise
 * hears bare cells. The repair is reported as a warning for review.
 */
function inferHeaderRow(block: Extract<Block, { kind: 'table' }>): Extract<Block, { kind: 'table' }> | undefined {
  const rows = block.rows.filter((r) => r.length > 0);
  if (rows.length < 2 || rows.some((r) => r.some((c) => c.header))) return undefined;
  const first = rows[0]!.map((c) => inlineText(c.content));
  if (first.length < 2 || first.some((text) => text === '' || /^[\d\s.,%$€£¥+\-–()]+$/.test(text))) return undefined;
  // a first-row cell spanning down carries the rows beside it into the header (a nested header: "TEDs" over "simple", "all")
  let headerRows = 1;
  const deepest = Math.max(...rows[0]!.map((c) => c.rowSpan ?? 1));
  if (deepest > 1 && deepest < rows.length && rows.slice(1, deepest).every((row) => row.every((c) => !/^[\d\s.,%$€£¥+\-–()]*$/.test(inlineText(c.content)))))
    headerRows = deepest;
  const asHeader = (row: TableCell[]) => row.map((c) => ({ ...c, header: true, scope: (c.colSpan ?? 1) > 1 ? ('colgroup' as const) : ('col' as const) }));
  return { ...block, rows: [...rows.slice(0, headerRows).map(asHeader), ...rows.slice(headerRows)] };
}

/**
 * When the document does not open with a level-1 heading, the title becomes
 * the h1 and the body's headings start at h2. `firstLevel` is the level of the
 * document's first heading, undefined when it has none.
 */
function titleIsH1For(firstLevel: number | undefined): boolean {
  return firstLevel === undefined || Math.trunc(firstLevel) !== 1;
}

/**
 * How the document's outline starts: the title is the h1 unless the first
 * heading is level 1; and when the title is the h1 and a level-1 heading
 * comes later (a chapter after front matter), every heading moves one level
 * down, so the chapter stays above its sections instead of joining them.
 */
export function outlineOf(levels: number[]): { titleIsH1: boolean; shift: number } {
  const titleIsH1 = titleIsH1For(levels[0]);
  return { titleIsH1, shift: titleIsH1 && levels.slice(1).some((level) => Math.trunc(level) === 1) ? 1 : 0 };
}

export function headingLevels(pages: PageResult[]): number[] {
  const levels: number[] = [];
  const visit = (blocks: Block[]) => {
    for (const block of blocks) {
      if (block.kind === 'heading') levels.push(block.level);
      else if (block.kind === 'blockquote') visit(block.children);
    }
  };
  for (const page of pages) visit(page.blocks);
  return levels;
}

/**
 * What both renderers render, page after page in order: heading levels never
 * more than one deeper than the previous heading, with an h1 first, and header
 * rows inferred for tables that have none. Returns copies; inputs are not changed.
 */
export function createPreparer(titleIsH1: boolean, shift = 0) {
  const repairs: HtmlWarning[] = [];
  let prev = titleIsH1 ? 1 : 0;
  const fix = (blocks: Block[]): Block[] =>
    blocks.map((block) => {
      if (block.kind === 'heading') {
        const raw = Math.min(6, Math.max(1, Math.trunc(block.level) || 1) + shift);
        const level = (prev === 0 ? 1 : Math.max(titleIsH1 ? 2 : 1, Math.min(raw, prev + 1))) as Level;
        prev = level;
        return { ...block, level };
      }
      if (block.kind === 'table') {
        const inferred = inferHeaderRow(block);
        if (inferred) {
          repairs.push({
            page: block.page,
            kind: 'inferred-table-headers',
            message: `A table on page ${block.page} had no header cells; its first row was taken as column headers, please review`,
          });
          return inferred;
        }
      }
      if (block.kind === 'blockquote') return { ...block, children: fix(block.children) };
      return block;
    });
  return { repairs, page: (page: PageResult): PageResult => ({ ...page, blocks: fix(page.blocks) }) };
}

/**
 * The pages of a document held in memory as the streaming renderer sees
 * them: in order, figures described from their captions (figures.ts),
 * inferred headings at document-wide levels (heading-levels.ts), paragraphs
 * a page break cut in two made whole (paragraphs.ts).
 */
export function documentPages(input: ConvertedDocument): PageResult[] {
  const pages = [...input.pages].sort((a, b) => a.page - b.page).map((page) => describePage(page));
  const headings = createDocumentHeadings(!input.meta.tagged);
  for (const page of pages) headings.add(page);
  return joinBrokenParagraphs(pages.map((page) => withHeadingLevels(page, headings.levelsOf(page))));
}

/** The HTML document written in pieces: the body page by page, then the shell around it once every heading is known. */
export type HtmlWriter = {
  /** the rendered top-level blocks of <main> for one prepared page */
  page(page: PageResult): string[];
  finish(pageCount: number): {
    before: string;
    after: string;
    warnings: HtmlWarning[];
    headings: HtmlRender['headings'];
    /** footnote reference tokens whose footnote never came: unlinkDanglingRefs drops their links */
    dangling: string[];
  };
};

export function createHtmlWriter(meta: DocumentMeta, titleIsH1: boolean, repairs: HtmlWarning[]): HtmlWriter {
  const ctx: Ctx = {
    warnings: repairs,
    headings: [],
    usedIds: new Set(['main', 'toc-heading', 'doc-title']),
    footnoteRefs: new Set(),
    footnoteTargets: new Set(),
    tableCount: 0,
    figureCount: 0,
    markedPages: new Set(),
  };
  let pagesSeen = 0;
  return {
    page(page) {
      pagesSeen++;
      const parts = [pageMarker(ctx, page.label || String(page.page)).trimEnd()];
      for (const block of page.blocks) {
        const html = renderBlock(ctx, block);
        if (html) parts.push(html);
      }
      return parts;
    },
    finish(pageCount) {
      const title = documentTitle(meta);
      const lang = validLang(meta.lang) ?? 'en';
      const long = ctx.headings.length >= 6 || (ctx.headings.length >= 3 && pagesSeen > 1);
      const toc = long ? `${renderToc(ctx.headings)}\n` : '';
      const header = titleIsH1 ? `<h1 id="doc-title">${escapeHtml(title)}</h1>` : `<p class="doc-title">${escapeHtml(title)}</p>`;
      const source = meta.sourceName ? ` from ${escapeHtml(meta.sourceName)}` : '';
      const before = `<!DOCTYPE html>
<html lang="${escapeHtml(lang)}"${isRtl(lang) ? ' dir="rtl"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${meta.author ? `<meta name="author" content="${escapeHtml(meta.author)}">\n` : ''}${meta.subject ? `<meta name="description" content="${escapeHtml(meta.subject)}">\n` : ''}<meta name="generator" content="Folio">
<style>
${CSS}
</style>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header>
${header}
</header>
${toc}<main id="main" tabindex="-1">
`;
      const after = `
</main>
<footer>
<p>Accessible version converted by Folio${source}: ${pageCount} ${pageCount === 1 ? 'page' : 'pages'}.</p>
</footer>
</body>
</html>
`;
      const dangling = [...ctx.footnoteRefs].filter((token) => !ctx.footnoteTargets.has(token));
      return { before, after, warnings: ctx.warnings, headings: ctx.headings, dangling };
    },
  };
}

/** Footnote references pointing nowhere would be dead links: keeps the label, drops the link. */
export function unlinkDanglingRefs(html: string, dangling: string[]): string {
  let out = html;
  for (const token of dangling) {
    if (out.includes(`href="#fn-${token}"`)) {
      out = out.replace(
        new RegExp(`<sup><a href="#fn-${token}"(?: id="fnref-${token}")? role="doc-noteref" aria-label="[^"]*">([^<]*)</a></sup>`, 'g'),
        '<sup>$1</sup>',
      );
    }
  }
  return out;
}

/** A whole document in memory (tests, small documents); the streaming renderer writes the same HTML page by page. */
export function renderHtml(input: ConvertedDocument): HtmlRender {
  const pages = documentPages(input);
  const { titleIsH1, shift } = outlineOf(headingLevels(pages));
  const preparer = createPreparer(titleIsH1, shift);
  const writer = createHtmlWriter(input.meta, titleIsH1, preparer.repairs);
  const body = pages.flatMap((page) => writer.page(preparer.page(page)));
  const { before, after, warnings, headings, dangling } = writer.finish(pages.length);
  const parts = dangling.length === 0 ? body : body.map((part) => unlinkDanglingRefs(part, dangling));
  return { html: before + parts.join('\n') + after, warnings, headings, shell: { before, after }, mainParts: parts };
}

const CSS = `:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfc; --muted: #555; --link: #0645ad; --line: #c8c8c8; --warn-bg: #fff4d6; --warn-fg: #5a3b00; --focus: #b8520a; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e6e3; --bg: #161616; --muted: #b0b0b0; --link: #8ab4f8; --line: #4a4a4a; --warn-bg: #3d2f00; --warn-fg: #ffe19a; --focus: #ffb86b; } }
*, *::before, *::after { box-sizing: border-box; }
html { font-size: 100%; -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0 auto; padding: 1rem; max-width: 46rem; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; font-size: 1.0625rem; line-height: 1.6; color: var(--fg); background: var(--bg); overflow-wrap: break-word; }
a { color: var(--link); }
a:focus-visible, [tabindex]:focus-visible { outline: 0.1875rem solid var(--focus); outline-offset: 0.125rem; }
.skip-link { position: absolute; left: 0.5rem; top: -10rem; padding: 0.5rem 1rem; background: var(--bg); color: var(--link); z-index: 10; }
.skip-link:focus { top: 0.5rem; }
header { border-bottom: 0.0625rem solid var(--line); margin-bottom: 1.5rem; }
.doc-title { font-size: 1.1rem; color: var(--muted); }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.6em 0 0.5em; }
h1 { font-size: 2rem; } h2 { font-size: 1.5rem; } h3 { font-size: 1.25rem; } h4, h5, h6 { font-size: 1.1rem; }
.toc { border: 0.0625rem solid var(--line); padding: 0.5rem 1rem; margin-bottom: 2rem; }
.toc-title { font-weight: 600; margin: 0.25rem 0; }
.toc ol { padding-inline-start: 1.25rem; }
.pagebreak { display: block; margin: 2rem 0 1rem; border-top: 0.0625rem dashed var(--line); }
.pagebreak::after { content: attr(title); display: block; font-size: 0.8rem; color: var(--muted); text-align: end; }
/* a page that ends inside a paragraph is marked where it ends, in the line */
p .pagebreak { display: inline; margin: 0; border: 0; }
p .pagebreak::after { display: inline; margin: 0 0.25rem; vertical-align: super; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: 1rem 0; }
table { border-collapse: collapse; min-width: 50%; }
caption { text-align: start; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 0.0625rem solid var(--line); padding: 0.3rem 0.5rem; text-align: start; vertical-align: top; }
th { font-weight: 600; }
figure { margin: 1.5rem 0; }
img { max-width: 100%; height: auto; }
figcaption { font-size: 0.95rem; color: var(--muted); }
.form-fields dl { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.25rem 1rem; }
.form-fields dt { font-weight: 600; }
.form-fields dd { margin: 0; }
.form-empty, .form-options { color: var(--muted); }
.needs-alt { background: var(--warn-bg); color: var(--warn-fg); padding: 0.5rem; }
pre { overflow-x: auto; padding: 0.75rem; border: 0.0625rem solid var(--line); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.95em; }
.formula { overflow-x: auto; }
math[display="block"] { display: block; margin: 1rem 0; }
blockquote { margin: 1rem 0; padding-inline-start: 1rem; border-inline-start: 0.25rem solid var(--line); }
.footnote { font-size: 0.9rem; border-top: 0.0625rem solid var(--line); margin-top: 1rem; }
.footnote p { margin: 0.25rem 0; }
footer { margin-top: 3rem; border-top: 0.0625rem solid var(--line); color: var(--muted); font-size: 0.9rem; }
@media print { .skip-link, .toc { display: none; } .pagebreak { break-before: page; border: 0; } p .pagebreak { break-before: auto; } }`;
