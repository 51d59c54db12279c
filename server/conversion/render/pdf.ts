import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import type { Log } from '../../log.ts';
import type { Block, ConvertedDocument, DocumentMeta, Inline, ListBlock, PageResult, TableCell } from '../model.ts';
import { blocksText } from '../page-content.ts';
import { createPreparer, documentTitle, headingLevels, documentPages, outlineOf } from './html.ts';
import { FONTS, needsActualText, needsScriptLayout, shareFaces } from './pdf-fonts.ts';
import { pdfImage } from './pdf-images.ts';
import { ScriptText, type StyledRun } from './pdf-layout.ts';
import { cleanText, inlineText, isRtl, validLang } from './text.ts';

type Doc = PDFKit.PDFDocument;
type TextLayout = { indent?: number; width?: number; align?: 'left' | 'right' | 'center' };
type Struct = PDFKit.PDFStructureElement;

const HEADING_SIZE = [0, 20, 16, 14, 12.5, 11.5, 11] as const;
const BODY_SIZE = 10.5;
const MARGIN = 56;

/** Text pdfkit can lay out: no control characters, tabs as spaces. */
function pdfText(text: string): string {
  return cleanText(text).replace(/\t/g, '    ').replace(/\r\n?/g, '\n');
}

type Run = StyledRun;

function runs(content: Inline[] | undefined, font: keyof typeof FONTS = 'regular', link?: string, lang?: string): Run[] {
  if (!content) return [];
  const out: Run[] = [];
  for (const node of content) {
    switch (node.kind) {
      case 'text':
        out.push({ text: node.text, font, link, lang });
        break;
      case 'code':
        out.push({ text: node.text, font: 'mono', link, lang });
        break;
      case 'math':
        out.push({ text: node.text, font, link, lang });
        break;
      case 'emphasis': {
        const next: keyof typeof FONTS = node.strong
          ? font === 'italic' || font === 'boldItalic'
            ? 'boldItalic'
            : 'bold'
          : font === 'bold' || font === 'boldItalic'
            ? 'boldItalic'
            : 'italic';
        out.push(...runs(node.children, next, link, lang));
        break;
      }
      case 'link':
        out.push(...runs(node.children, font, /^(https?|mailto):/i.test(node.href) ? node.href : link, lang));
        break;
      case 'lang':
        out.push(...runs(node.children, font, link, validLang(node.lang) ?? lang));
        break;
      case 'footnoteRef':
        out.push({ text: `[${node.label}]`, font, link, lang });
        break;
      case 'lineBreak':
        out.push({ text: '\n', font, link, lang });
        break;
      // the tagged PDF has its own pages: the source's page ends draw nothing, as the block-level ones do not
      case 'pageBreak':
        break;
    }
  }
  return out.filter((r) => r.text !== '');
}

class PdfWriter {
  doc: Doc;
  root: Struct;
  width: number;
  figureCount = 0;
  outline: { level: number; item: PDFKit.PDFOutline }[] = [];
  lang: string | undefined;

  constructor(doc: Doc, root: Struct, lang?: string) {
    this.doc = doc;
    this.root = root;
    this.width = doc.page.width - MARGIN * 2;
    this.lang = lang;
  }

  ensureSpace(height: number): void {
    if (this.doc.y + height > this.doc.page.height - MARGIN) this.doc.addPage();
  }

  /** Writes runs of text as one paragraph at the current position, continuing across pages. */
  writeRuns(list: Run[], size: number, options: TextLayout = {}): void {
    const writer = this.runWriter(list, size, options);
    for (const draw of writer.drawing(writer.runs)) draw();
  }

  /**
   * Drawing for consecutive runs at a time, so a paragraph's runs can be split between structure
   * elements (P and its Links); each closure becomes one marked-content item.
   */
  runWriter(list: Run[], size: number, options: TextLayout): { runs: Run[]; drawing: (group: Run[]) => (() => void)[] } {
    const doc = this.doc;
    const x = MARGIN + (options.indent ?? 0);
    const width = options.width ?? this.width - (options.indent ?? 0);
    const clean = list.map((r) => ({ ...r, text: pdfText(r.text) })).filter((r) => r.text !== '');
    let index = 0;
    if (clean.some((r) => needsScriptLayout(r.text, r.font))) {
      const text = new ScriptText(doc, clean, size, { width, lineGap: 2, align: options.align, lang: this.lang });
      return { runs: clean, drawing: (group) => group.flatMap((run) => text.parts(x, clean.indexOf(run))) };
    }
    const write = (run: Run) => {
      const i = index++;
      doc.fontSize(size).font(FONTS[run.font]);
      const opts: PDFKit.Mixins.TextOptions = { width, continued: i < clean.length - 1, align: options.align ?? 'left', lineGap: 2 };
      if (run.link) opts.link = run.link;
      if (i === 0) doc.text(run.text, x, doc.y, opts);
      else doc.text(run.text, opts);
      if (i === clean.length - 1) doc.font(FONTS.regular);
    };
    return { runs: clean, drawing: (group) => [() => group.forEach(write)] };
  }

  /**
   * A structure element holding text; linked runs become Link children, so
   * each link annotation sits in the structure tree as PDF/UA requires.
   */
  textElement(type: string, list: Run[], size: number, options: TextLayout = {}, structOptions: PDFKit.Mixins.StructureElementOptions = {}): Struct {
    return this.doc.struct(type, structOptions, this.textChildren(list, size, options));
  }

  textChildren(list: Run[], size: number, options: TextLayout = {}): PDFKit.PDFStructureElementChild[] {
    const doc = this.doc;
    const writer = this.runWriter(list, size, options);
    const groups: Run[][] = [];
    for (const run of writer.runs) {
      const last = groups.at(-1);
      if (last && last[0]!.link === run.link && last[0]!.lang === run.lang) last.push(run);
      else groups.push([run]);
    }
    return groups.flatMap((group): PDFKit.PDFStructureElementChild[] => {
      const { link, lang } = group[0]!;
      const draw = writer.drawing(group);
      const text = group.map((r) => r.text).join('');
      // Readers that follow content order get right-to-left text (drawn in visual order) and reordered scripts from /ActualText.
      const actual = needsActualText(text) ? { actual: text } : {};
      if (link) return [doc.struct('Link', { alt: text.trim() || link, ...(lang ? { lang } : {}), ...actual }, draw)];
      if (lang || needsActualText(text)) return [doc.struct('Span', { ...(lang ? { lang } : {}), ...actual }, draw)];
      return draw;
    });
  }

  /** Headings to level 3 become the PDF's bookmarks (outline), nested like the headings. */
  bookmark(level: number, title: string): void {
    if (level > 3 || title === '') return;
    while (this.outline.length > 0 && this.outline.at(-1)!.level >= level) this.outline.pop();
    const parent = this.outline.at(-1)?.item ?? this.doc.outline;
    // pdfkit computes the destination's left as page width minus `left`; passing the width lands on the page's left edge.
    const options = { expanded: level === 1, top: this.doc.y, left: this.doc.page.width } as { expanded?: boolean };
    this.outline.push({ level, item: parent.addItem(title, options) });
  }

  block(parent: Struct, block: Block): void {
    const doc = this.doc;
    switch (block.kind) {
      case 'heading': {
        const size = HEADING_SIZE[block.level];
        this.ensureSpace(size * 3);
        doc.moveDown(0.6);
        const content = runs(block.content, 'bold');
        this.bookmark(block.level, pdfText(inlineText(block.content)));
        parent.add(this.textElement(`H${block.level}`, content, size));
        doc.moveDown(0.3);
        return;
      }
      case 'paragraph': {
        const content = runs(block.content);
        if (content.length === 0) return;
        this.ensureSpace(BODY_SIZE * 2);
        parent.add(this.textElement('P', content, BODY_SIZE));
        doc.moveDown(0.5);
        return;
      }
      case 'list':
        this.list(parent, block, 0);
        doc.moveDown(0.5);
        return;
      case 'table':
        this.table(parent, block);
        return;
      case 'figure':
        this.figure(parent, block);
        return;
      case 'formula': {
        const alt = block.tex?.trim() || block.text.trim() || 'formula';
        const text = block.text.trim() || block.tex?.trim() || '';
        if (text === '') return;
        this.ensureSpace(BODY_SIZE * 2);
        parent.add(doc.struct('Formula', { alt: pdfText(alt) }, () => this.writeRuns([{ text, font: 'mono' }], BODY_SIZE, { indent: block.display ? 24 : 0 })));
        doc.moveDown(0.5);
        return;
      }
      case 'footnote': {
        const content = [{ text: `${block.label} `, font: 'regular' as const }, ...runs(block.content)];
        this.ensureSpace(BODY_SIZE * 2);
        parent.add(this.textElement('Note', content, BODY_SIZE - 1.5));
        doc.moveDown(0.4);
        return;
      }
      case 'blockquote': {
        const quote = doc.struct('BlockQuote');
        parent.add(quote);
        for (const child of block.children) this.block(quote, child);
        quote.end();
        return;
      }
      case 'code': {
        this.ensureSpace(BODY_SIZE * 2);
        parent.add(doc.struct('Code', {}, () => this.writeRuns([{ text: block.text, font: 'mono' }], BODY_SIZE - 1, { indent: 12 })));
        doc.moveDown(0.5);
        return;
      }
      case 'form':
        this.form(parent, block);
        return;
      case 'pageBreak':
        return;
    }
  }

  /**
   * Each field is a Form element (PDF/UA 7.18.4) holding its label and value
   * as text and the reference to a read-only widget that carries the value
   * (/V) and the label as its accessible name (/TU). The widget draws nothing
   * (no appearance, NeedAppearances off): the text shows the value once.
   */
  form(parent: Struct, block: Extract<Block, { kind: 'form' }>): void {
    const doc = this.doc as Doc & {
      _root: { data: { AcroForm?: { data: Record<string, unknown> } } };
      _fieldDict(name: string, type: string, options: Record<string, unknown>): Record<string, unknown>;
      _addToParent(ref: unknown): void;
      annotate(x: number, y: number, w: number, h: number, options: Record<string, unknown>): Doc;
    };
    if (!doc._root.data.AcroForm) {
      doc.initForm();
      doc._root.data.AcroForm!.data.NeedAppearances = false;
    }
    for (const [index, field] of block.fields.entries()) {
      this.ensureSpace(BODY_SIZE * 2.5);
      const label = pdfText(field.label);
      const shown = field.kind === 'checkbox' ? (field.checked ? '☑ checked' : '☐ not checked') : pdfText(field.value) || '(empty)';
      const top = doc.y;
      const element = doc.struct('Form');
      parent.add(element);
      element.add(() =>
        this.writeRuns(
          [
            { text: `${label}: `, font: 'bold' },
            { text: shown, font: 'regular' },
          ],
          BODY_SIZE,
        ),
      );
      const type = field.kind === 'text' ? 'text' : field.kind === 'choice' ? 'combo' : field.kind === 'radio' ? 'radioButton' : 'checkbox';
      const options: Record<string, unknown> = { readOnly: true, ...(field.kind === 'choice' && field.options.length > 0 ? { select: field.options } : {}) };
      const dict = doc._fieldDict(`${field.name || 'field'}.p${block.page}f${index + 1}`, type, options);
      dict.TU = new String(label);
      if (field.kind === 'checkbox' || field.kind === 'radio') dict.V = field.value && (field.kind === 'radio' || field.checked) ? 'On' : 'Off';
      else dict.V = new String(field.value);
      const height = Math.max(BODY_SIZE + 2, doc.y - top);
      doc.annotate(MARGIN, top, this.width, height, { ...dict, Subtype: 'Widget', F: 4, structParent: element });
      doc._addToParent(doc.page.annotations.at(-1));
      element.end();
      doc.moveDown(0.3);
    }
    doc.moveDown(0.3);
  }

  list(parent: Struct, list: ListBlock, depth: number): void {
    const doc = this.doc;
    const l = doc.struct('L');
    parent.add(l);
    const indent = 14 + depth * 18;
    list.items.forEach((item, index) => {
      const label = list.ordered ? `${(list.start ?? 1) + index}.` : depth % 2 === 0 ? '•' : '◦';
      this.ensureSpace(BODY_SIZE * 2);
      const li = doc.struct('LI');
      l.add(li);
      const y = doc.y;
      li.add(
        doc.struct('Lbl', {}, () => {
          doc
            .font(FONTS.regular)
            .fontSize(BODY_SIZE)
            .text(label, MARGIN + indent - 14, y, { width: 14, lineBreak: false });
        }),
      );
      doc.y = y;
      const content = runs(item.content);
      // A nested list belongs in its item's body (PDF 1.7 §14.8.4.3.3); the body is attached before
      // its children are added so their content is drawn in reading order.
      const body = doc.struct('LBody');
      li.add(body);
      if (content.length > 0) for (const child of this.textChildren(content, BODY_SIZE, { indent: indent + 4 })) body.add(child);
      else doc.moveDown(1);
      if (item.children) this.list(body, item.children, depth + 1);
      body.end();
      li.end();
    });
    l.end();
  }

  table(parent: Struct, block: Extract<Block, { kind: 'table' }>): void {
    const doc = this.doc;
    const rows = block.rows.filter((r) => r.length > 0);
    if (rows.length === 0) return;
    // Grid placement honouring spans: a cell occupies the next free column of its row.
    const occupied = new Set<string>();
    const placed: { cell: TableCell; row: number; col: number }[][] = [];
    let columns = 1;
    rows.forEach((row, r) => {
      let c = 0;
      placed.push(
        row.map((cell) => {
          while (occupied.has(`${r},${c}`)) c++;
          const col = c;
          const rs = Math.max(1, Math.min(cell.rowSpan ?? 1, rows.length - r));
          const cs = Math.max(1, cell.colSpan ?? 1);
          for (let i = 0; i < rs; i++) for (let j = 0; j < cs; j++) occupied.add(`${r + i},${col + j}`);
          c += cs;
          columns = Math.max(columns, c);
          return { cell, row: r, col };
        }),
      );
    });
    columns = Math.min(columns, 40);
    const colWidth = this.width / columns;
    // Right-to-left documents lay columns out from the right, as their HTML does under dir="rtl".
    const colX = (col: number, span: number) => (isRtl(this.lang) ? MARGIN + this.width - (col + span) * colWidth : MARGIN + col * colWidth);
    const size = columns > 8 ? BODY_SIZE - 3 : BODY_SIZE - 1;
    const table = doc.struct('Table');
    parent.add(table);
    const captionText = inlineText(block.caption);
    if (captionText) {
      this.ensureSpace(BODY_SIZE * 2);
      table.add(this.textElement('Caption', runs(block.caption, 'bold'), BODY_SIZE));
      doc.moveDown(0.2);
    }
    let headerRows = 0;
    while (headerRows < rows.length && rows[headerRows]!.every((cell) => cell.header)) headerRows++;
    for (const [rowIndex, row] of placed.entries()) {
      const texts = row.map(({ cell, col }) => {
        const cs = Math.max(1, Math.min(cell.colSpan ?? 1, columns - col));
        const text = pdfText(inlineText(cell.content));
        const font = cell.header ? 'bold' : 'regular';
        const width = Math.max(8, colWidth * cs - 6);
        return {
          text,
          width,
          script: needsScriptLayout(text, font) ? new ScriptText(doc, [{ text, font }], size, { width, lineGap: 0, lang: this.lang }) : undefined,
        };
      });
      const heights = texts.map(
        ({ text, width, script }, i) =>
          script?.height ??
          doc
            .font(row[i]!.cell.header ? FONTS.bold : FONTS.regular)
            .fontSize(size)
            .heightOfString(text || ' ', { width }),
      );
      const rowHeight = Math.min(Math.max(...heights, size) + 6, doc.page.height - MARGIN * 2 - 20);
      this.ensureSpace(rowHeight);
      const top = doc.y;
      const tr = doc.struct('TR');
      table.add(tr);
      for (const [i, { cell, col }] of row.entries()) {
        if (col >= columns) continue;
        const cs = Math.max(1, Math.min(cell.colSpan ?? 1, columns - col));
        const x = colX(col, cs);
        const { text, width, script } = texts[i]!;
        const type = cell.header ? 'TH' : 'TD';
        const element = doc.struct(type, needsActualText(text) ? { actual: text } : {}, () => {
          doc.font(cell.header ? FONTS.bold : FONTS.regular).fontSize(size);
          if (script) script.drawIn(x + 3, top + 3, rowHeight - 4);
          else if (text !== '') doc.text(text, x + 3, top + 3, { width, height: rowHeight - 4, ellipsis: true });
        });
        // Table attributes (PDF 1.7 §14.8.5.7): header scope, spans. pdfkit has no API for them; plain
        // strings become PDF names when the dictionary is written.
        const attributes: Record<string, string | number> = { O: 'Table' };
        if (cell.header) attributes.Scope = pdfScope(cell, rowIndex, col, headerRows);
        if ((cell.rowSpan ?? 1) > 1) attributes.RowSpan = Math.trunc(cell.rowSpan!);
        if (cs > 1) attributes.ColSpan = cs;
        if (Object.keys(attributes).length > 1) (element as unknown as { dictionary: { data: Record<string, unknown> } }).dictionary.data.A = attributes;
        tr.add(element);
      }
      tr.end();
      // Cell borders are decoration.
      doc.markContent('Artifact', { type: 'Layout' });
      doc.lineWidth(0.5).strokeColor('#888888');
      for (const { cell, col } of row) {
        if (col >= columns) continue;
        const cs = Math.max(1, Math.min(cell.colSpan ?? 1, columns - col));
        doc.rect(colX(col, cs), top, colWidth * cs, rowHeight).stroke();
      }
      doc.endMarkedContent();
      doc.x = MARGIN;
      doc.y = top + rowHeight;
    }
    table.end();
    doc.font(FONTS.regular).fontSize(BODY_SIZE);
    doc.moveDown(0.8);
  }

  figure(parent: Struct, block: Extract<Block, { kind: 'figure' }>): void {
    const doc = this.doc;
    this.figureCount++;
    let bytes: Buffer | undefined;
    if (block.image) {
      try {
        bytes = Buffer.from(block.image.base64, 'base64');
      } catch {
        bytes = undefined;
      }
    }
    const drawImage = (): void => {
      if (!bytes || !block.image) return;
      const w = Math.max(1, block.image.width || 200);
      const h = Math.max(1, block.image.height || 150);
      const scale = Math.min(1, this.width / w, 320 / h);
      try {
        doc.image(pdfImage(bytes, `Figure${this.figureCount}`) as Buffer, MARGIN, doc.y, { width: w * scale, height: h * scale });
        doc.y += h * scale + 6;
      } catch {
        // Undecodable image bytes: keep the structure, skip the picture.
      }
      doc.x = MARGIN;
    };
    const caption = runs(block.caption);
    // Page breaks must happen outside marked content, so room is made before the figure opens.
    if (bytes && block.image) {
      const w = Math.max(1, block.image.width || 200);
      const h = Math.max(1, block.image.height || 150);
      this.ensureSpace(h * Math.min(1, this.width / w, 320 / h) + 10);
    }
    if (block.decorative) {
      if (bytes) {
        doc.markContent('Artifact', { type: 'Layout' });
        drawImage();
        doc.endMarkedContent();
      }
    } else {
      const alt =
        block.alt?.trim() ||
        (inlineText(block.caption) ? `Figure ${this.figureCount}: ${inlineText(block.caption)}` : `Figure ${this.figureCount}: no description available`);
      if (bytes) {
        parent.add(doc.struct('Figure', { alt: pdfText(alt) }, drawImage));
      } else if (block.alt?.trim()) {
        this.ensureSpace(BODY_SIZE * 2);
        parent.add(doc.struct('Figure', { alt: pdfText(alt) }, () => this.writeRuns([{ text: `[${alt}]`, font: 'italic' }], BODY_SIZE)));
      }
    }
    if (caption.length > 0) {
      this.ensureSpace(BODY_SIZE * 2);
      parent.add(this.textElement('Caption', caption, BODY_SIZE - 1));
    }
    if (block.text?.trim()) {
      this.ensureSpace(BODY_SIZE * 2);
      parent.add(this.textElement('P', [{ text: `Text in the figure: ${block.text.trim()}`, font: 'italic' }], BODY_SIZE - 1.5));
    }
    doc.moveDown(0.6);
  }
}

function pdfScope(cell: TableCell, rowIndex: number, col: number, headerRows: number): 'Column' | 'Row' | 'Both' {
  switch (cell.scope) {
    case 'col':
    case 'colgroup':
      return 'Column';
    case 'row':
    case 'rowgroup':
      return 'Row';
    default:
      return rowIndex < headerRows ? 'Column' : col === 0 ? 'Row' : 'Column';
  }
}

function drawArtifacts(doc: Doc, title: string, pageNumber: number): void {
  const { x, y } = doc;
  // The running footer sits inside the bottom margin; without lifting the margin pdfkit would break the page again, recursively.
  const bottom = doc.page.margins.bottom;
  doc.page.margins.bottom = 0;
  doc.markContent('Artifact', { type: 'Pagination' });
  doc.font(FONTS.regular).fontSize(8).fillColor('#555555');
  const shown = title.length > 90 ? `${title.slice(0, 87)}…` : title;
  const width = doc.page.width - MARGIN * 2;
  // Tall enough for one line in any face at 8 pt, too short for two.
  if (needsScriptLayout(shown, 'regular')) new ScriptText(doc, [{ text: shown, font: 'regular' }], 8, { width, lineGap: 0 }).drawIn(MARGIN, MARGIN / 2, 14);
  else doc.text(shown, MARGIN, MARGIN / 2, { width, lineBreak: false, height: 10, ellipsis: true });
  doc.text(String(pageNumber), MARGIN, doc.page.height - MARGIN / 2 - 8, { width, align: 'center', lineBreak: false });
  doc.endMarkedContent();
  doc.page.margins.bottom = bottom;
  doc.fillColor('#000000').font(FONTS.regular).fontSize(BODY_SIZE);
  doc.x = x;
  doc.y = y;
}

/** The tagged PDF written page by page to `out`; `finish` resolves once every byte is handed over. */
export type TaggedPdfWriter = { page(page: PageResult): void; finish(): Promise<void> };

export function createPdfWriter(meta: DocumentMeta, titleIsH1: boolean, out: NodeJS.WritableStream, simple = false): TaggedPdfWriter {
  const title = pdfText(documentTitle(meta));
  const lang = validLang(meta.lang) ?? 'en';
  const doc = new PDFDocument({
    tagged: true,
    pdfVersion: '1.7',
    // @types/pdfkit lags the library, which supports PDF/UA (pdfkit.js initSubset).
    subset: 'PDF/UA' as never,
    lang,
    displayTitle: true,
    autoFirstPage: false,
    margin: MARGIN,
    size: 'A4',
    info: {
      Title: title,
      ...(meta.author ? { Author: pdfText(meta.author) } : {}),
      ...(meta.subject ? { Subject: pdfText(meta.subject) } : {}),
      Creator: 'Folio',
    },
  });
  // pdfkit writes each page out as the next one starts, so only the page being drawn stays in memory
  const done = finished(doc.pipe(out));
  let pageNumber = 0;
  doc.on('pageAdded', () => {
    pageNumber++;
    drawArtifacts(doc, title, pageNumber);
  });
  shareFaces(doc);
  doc.registerFont('body', FONTS.regular);
  doc.addPage();
  doc.font(FONTS.regular).fontSize(BODY_SIZE);
  const root = doc.struct('Document');
  doc.addStructure(root);
  const writer = new PdfWriter(doc, root, lang);
  if (titleIsH1) writer.block(root, { kind: 'heading', page: 1, level: 1, content: [{ kind: 'text', text: title }] });
  return {
    page(page) {
      for (const block of page.blocks) {
        if (simple) {
          const text = blockText(block);
          if (text) root.add(doc.struct('P', {}, () => writer.writeRuns([{ text, font: 'regular' }], BODY_SIZE)));
        } else {
          writer.block(root, block);
        }
      }
    },
    async finish() {
      root.end();
      doc.end();
      await done;
    },
  };
}

async function render(input: ConvertedDocument, simple: boolean): Promise<Buffer> {
  const pages = documentPages(input);
  const { titleIsH1, shift } = outlineOf(headingLevels(pages));
  const preparer = createPreparer(titleIsH1, shift);
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  const writer = createPdfWriter(input.meta, titleIsH1, sink, simple);
  for (const page of pages) writer.page(preparer.page(page));
  await writer.finish();
  return Buffer.concat(chunks);
}

function blockText(block: Block): string {
  switch (block.kind) {
    case 'heading':
    case 'paragraph':
    case 'footnote':
      return inlineText(block.content);
    case 'list':
      return block.items.map((i) => inlineText(i.content)).join(' ');
    case 'table':
      return block.rows.map((r) => r.map((c) => inlineText(c.content)).join(' ')).join(' ');
    case 'figure':
      return block.alt ?? '';
    case 'formula':
      return block.text;
    case 'blockquote':
      return block.children.map(blockText).join(' ');
    case 'code':
      return block.text;
    case 'form':
      return blocksText([block]);
    case 'pageBreak':
      return '';
  }
}

/**
 * A whole document's tagged PDF in memory (PDF/UA-1 shaped: structure tree, alt text, language,
 * title shown, embedded fonts). If anything in the content trips pdfkit, the
 * document is rendered again as tagged paragraphs only rather than failing.
 */
export async function renderTaggedPdf(document: ConvertedDocument, log?: Log): Promise<Buffer> {
  try {
    return await render(document, false);
  } catch (error) {
    log?.warn({ err: error }, 'tagged PDF: full rendering failed, falling back to paragraphs');
    return render(document, true);
  }
}
