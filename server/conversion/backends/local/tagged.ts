import type { Block, Inline, ListBlock, ListItem, TableCell } from '../../model.ts';
import type { FigureImage } from './images.ts';
import { parseHtml, serializeMathml } from '../vision/html-to-blocks.ts';
import { cleanString } from './pdf.ts';
import { RTL_LETTER, rightToLeft } from './segments.ts';
import { inlineText, runsToInlines, type Run } from './inline.ts';
import { formulaToTex } from './tex.ts';
import type { TextItem } from './text-layer.ts';

/**
 * A tagged page converted from its structure tree: the author's own
 * headings, lists, tables, figures and reading order. pdf.js gives the tree
 * per page with marked-content ids at the leaves; the text of each id comes
 * from the text layer.
 */

export type StructNode = {
  role?: string;
  type?: 'content' | 'object' | 'annotation';
  id?: string;
  alt?: string;
  lang?: string;
  scope?: string;
  mathML?: string;
  /** the element's /BBox attribute, when the producer wrote one (page space) */
  bbox?: number[];
  children?: StructNode[];
};

export type TaggedContext = {
  page: number;
  docLang: string;
  /** text of each marked-content id, in stream order */
  textById: Map<string, string>;
  /** link annotation id ("12R") → URL */
  links: Map<string, string>;
  /** marked contents that start a line set apart from the line before by more than a line's pitch (paragraphsApart) */
  apart?: Set<string>;
  /** pixels of Figure elements, found in the page's paint operations; 'mark' for one that paints only a mark of text size */
  figureImages?: Map<StructNode, FigureImage | 'mark'>;
};

const BLOCK_ROLES = new Set([
  'H',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'Title',
  'P',
  'L',
  'Table',
  'Figure',
  'Formula',
  'Note',
  'FENote',
  'BlockQuote',
  'Code',
  'Caption',
  'TOC',
  'TOCI',
  'Sect',
  'Part',
  'Art',
  'Div',
  'Document',
  'DocumentFragment',
  'Aside',
  'Index',
  'NonStruct',
  'Private',
  'Lbl',
  'LI',
  'LBody',
  'TR',
  'TH',
  'TD',
  'THead',
  'TBody',
  'TFoot',
]);

/** Build the text-by-id map from the text layer: items of one id joined in stream order. */
export function textByMarkedContent(items: TextItem[]): Map<string, string> {
  const map = new Map<string, string>();
  let previous: TextItem | undefined;
  for (const item of leftToRightRunsInOrder(rightToLeftInMarkedContent(items))) {
    if (!item.mcid || item.artifact) continue;
    const before = map.get(item.mcid) ?? '';
    const text = impliedSpace(previous, item) ? ` ${item.text}` : item.text;
    if (item.text !== '') previous = item;
    map.set(item.mcid, item.eol && item.text === '' ? (before === '' ? '' : `${before}\n`) : before + text + (item.eol ? '\n' : ''));
  }
  return map;
}

/**
 * Most producers draw a right-to-left line from its right edge, word after
 * word as it is read; some draw a marked content's pieces from the left (two
 * check box labels "خير" and "بلی" with "بلی" on the right, drawn "خير" first).
 * The pieces of one marked content on one line, right-to-left words among
 * them drawn from the left, are read from the right as an untagged line is.
 */
function rightToLeftInMarkedContent(items: TextItem[]): TextItem[] {
  if (!items.some((item) => RTL_LETTER.test(item.text))) return items;
  const out = [...items];
  let start = 0;
  while (start < items.length) {
    const first = items[start]!;
    let end = start + 1;
    while (
      end < items.length &&
      first.mcid !== undefined &&
      items[end]!.mcid === first.mcid &&
      !items[end]!.artifact &&
      Math.abs(items[end]!.y - first.y) <= Math.max(first.size, items[end]!.size) * 0.3
    )
      end++;
    const slots = [];
    for (let index = start; index < end; index++) if (items[index]!.text !== '') slots.push(index);
    const pieces = slots.map((index) => items[index]!);
    const words = pieces.filter((item) => RTL_LETTER.test(item.text));
    if (words.some((item, at) => at > 0 && item.x >= words[at - 1]!.x + words[at - 1]!.width - 0.5)) {
      const read = rightToLeft(pieces);
      slots.forEach((index, at) => {
        out[index] = read[at]!;
      });
    }
    start = end;
  }
  return out;
}

const STRONG_LTR = /[\p{N}\p{Script=Latin}]/u;
const SEPARATOR = /^[\s/.:,-]+$/u;

/**
 * A right-to-left line's stream draws its pieces from the right, numbers and
 * Latin words too ("19" "/" "09" "/" "1403" for the date 1403/09/19), while
 * those read left to right. Pieces of such a run (digits or Latin letters,
 * and the separators between them), drawn leftwards on one line and next to
 * right-to-left text, swap their texts end for end, so the run reads in its
 * own direction through whichever marked contents hold it.
 */
function leftToRightRunsInOrder(items: TextItem[]): TextItem[] {
  // a run is swapped only beside right-to-left text: a page without any is left as it is, at no cost
  if (!items.some((item) => RTL_LETTER.test(item.text))) return items;
  const out = [...items];
  const drawn = out.map((item, index) => ({ item, index })).filter(({ item }) => !item.artifact && item.mcid && item.text.trim() !== '');
  const sameLine = (a: TextItem, b: TextItem) => Math.abs(a.y - b.y) <= Math.max(a.size, b.size) * 0.3;
  const isLtrPiece = (item: TextItem) => !RTL_LETTER.test(item.text) && (STRONG_LTR.test(item.text) || SEPARATOR.test(item.text));
  let start = 0;
  while (start < drawn.length) {
    let end = start;
    while (
      end + 1 < drawn.length &&
      isLtrPiece(drawn[start]!.item) &&
      isLtrPiece(drawn[end + 1]!.item) &&
      sameLine(drawn[end]!.item, drawn[end + 1]!.item) &&
      drawn[end + 1]!.item.x + drawn[end + 1]!.item.width <= drawn[end]!.item.x + 0.5
    )
      end++;
    const run = drawn.slice(start, end + 1);
    const strong = run.filter(({ item }) => STRONG_LTR.test(item.text)).length;
    const before = drawn[start - 1]?.item;
    const beside = before && RTL_LETTER.test(before.text) && sameLine(before, run[0]!.item);
    if (run.length >= 3 && strong >= 2 && beside && STRONG_LTR.test(run[0]!.item.text) && STRONG_LTR.test(run.at(-1)!.item.text)) {
      const texts = run.map(({ item }) => item.text).reverse();
      run.forEach(({ index }, at) => {
        out[index] = { ...out[index]!, text: texts[at]! };
      });
    }
    start = end + 1;
  }
  return out;
}

/**
 * Whether a space belongs between two runs drawn one after the other on a
 * line with right-to-left text, the page drawing no space glyph: word
 * processors place right-to-left words, and the Latin words and numbers
 * among them, one by one, and pdf.js gives each its own run ("بلغة" "R" "و"
 * "Python"). A gap of 0.15 em or more between them is a space (letters of
 * one word touch: their gap is 0), and so is a line's end between two marked
 * contents (a cell's text wrapped). The next id's text starts with it, so a
 * word split over two marked contents keeps it too. Left-to-right lines are
 * left to pdf.js, which puts in the spaces their gaps imply, save a line's
 * end between two marked contents, which pdf.js does not see.
 */
function impliedSpace(previous: TextItem | undefined, item: TextItem): boolean {
  if (!previous || item.text === '' || /^\s/.test(item.text) || /\s$/.test(previous.text)) return false;
  const size = Math.max(previous.size, item.size);
  if (!RTL_LETTER.test(previous.text) && !RTL_LETTER.test(item.text))
    // left to right, only a wrapped line: the next piece starts back at the left ("Portable Document" / "Format"),
    // where a raised mark or the next word on the line goes on to the right; a hyphen or a web address's slash joins
    return (
      Math.abs(previous.y - item.y) > size * 0.3 &&
      item.x + size < previous.x + previous.width &&
      !/[-\u00ad/]$/.test(previous.text) &&
      !/^[/.]/.test(item.text)
    );
  // a line ends between two marked contents (a cell's text wrapped): a word ends there, unless it is hyphenated
  if (Math.abs(previous.y - item.y) > size * 0.3) return previous.mcid !== item.mcid && !/[-\u00ad]$/.test(previous.text);
  const gap = Math.max(item.x - (previous.x + previous.width), previous.x - (item.x + item.width));
  return gap >= size * 0.15;
}

export function structTreeToBlocks(root: StructNode, context: TaggedContext): Block[] {
  const blocks: Block[] = [];
  const { page } = context;

  const langOf = (node: StructNode): string | undefined => {
    const lang = cleanString(node.lang);
    if (!lang) return undefined;
    return lang.toLowerCase().split('-')[0] === context.docLang.toLowerCase().split('-')[0] ? undefined : lang;
  };

  const notes = collectNotes(root, page, context.textById);

  /** Inline runs of a subtree (everything below becomes text). */
  const runs = (node: StructNode, inherited: { href?: string; lang?: string; toc?: boolean }, out: Run[]) => {
    if (node.type === 'content' && node.id) {
      const text = context.textById.get(node.id);
      if (text) out.push({ text: text.replace(/\n+/g, '\n'), href: inherited.href, lang: inherited.lang });
      return;
    }
    if (node.type) return;
    const next = { ...inherited };
    const lang = langOf(node);
    if (lang) next.lang = lang;
    if (node.role === 'Link') {
      const annotation = node.children?.find((child) => child.type === 'annotation');
      const id = annotation?.id?.replace(/^pdfjs_internal_id_/, '');
      const href = id ? context.links.get(id) : undefined;
      if (href) next.href = href;
    }
    // an internal link, label or reference whose text is a note's label is the reference to that note
    // a table of contents numbers its sections with Lbls too: those are not note references
    if (node.role === 'TOC' || node.role === 'TOCI') next.toc = true;
    if (!next.href && !next.toc && (node.role === 'Link' || node.role === 'Lbl' || node.role === 'Reference') && notes.size > 0) {
      const label = plainText(node, context.textById).trim();
      const note = notes.get(label);
      if (note && !note.referenced) {
        note.referenced = true;
        out.push({ text: '', note: { id: note.id, label } });
        return;
      }
    }
    // a Span standing for a logo or symbol carries its reading as alt
    const alt = cleanString(node.alt);
    if (alt && node.role !== 'Figure' && node.role !== 'Formula') {
      out.push({ text: alt, href: next.href, lang: next.lang });
      return;
    }
    for (const child of node.children ?? []) runs(child, next, out);
  };

  const inlines = (node: StructNode): Inline[] => {
    const out: Run[] = [];
    runs(node, {}, out);
    return runsToInlines(out);
  };

  const hasBlockChild = (node: StructNode): boolean =>
    (node.children ?? []).some((child) => !child.type && child.role !== undefined && BLOCK_ROLES.has(child.role) && child.role !== 'Lbl');

  const headingLevel = (role: string): 1 | 2 | 3 | 4 | 5 | 6 | undefined => {
    if (role === 'Title') return 1;
    const match = /^H([1-6])$/.exec(role);
    return match ? (Number(match[1]) as 1 | 2 | 3 | 4 | 5 | 6) : role === 'H' ? 2 : undefined;
  };

  const list = (node: StructNode): ListBlock => {
    const items: ListItem[] = [];
    let ordered = false;
    let start: number | undefined;
    for (const child of node.children ?? []) {
      if (child.role === 'LI') {
        const content: Run[] = [];
        let children: ListBlock | undefined;
        for (const part of child.children ?? []) {
          if (part.role === 'Lbl') {
            const label = inlineText(inlines(part)).trim();
            const number = /^\(?(\d+)[.)]?$/.exec(label) ?? /^\(?([a-z]|[ivx]+)[.)]$/i.exec(label);
            if (number) {
              if (!ordered) start = /^\d+$/.test(number[1]!) ? Number(number[1]) : undefined;
              ordered = true;
            } else if (label && !/^[•◦▪▫■□●○‣⁃∙·\-–—*]$/u.test(label)) {
              content.push({ text: `${label} ` });
            }
          } else if (part.role === 'LBody') {
            for (const inner of part.children ?? []) {
              if (inner.role === 'L') children = list(inner);
              else runs(inner, {}, content);
            }
          } else if (part.role === 'L') {
            children = list(part);
          } else {
            runs(part, {}, content);
          }
        }
        items.push({ content: runsToInlines(content), ...(children ? { children } : {}) });
      } else if (child.role === 'L' && items.length > 0) {
        const last = items.at(-1)!;
        last.children = list(child);
      } else if (child.role === 'Caption') {
        blocks.push({ kind: 'paragraph', page, content: inlines(child) });
      }
    }
    return { kind: 'list', page, ordered, ...(ordered && start !== undefined && start !== 1 ? { start } : {}), items };
  };

  const figure = (node: StructNode): Block => {
    const alt = cleanString(node.alt);
    const captionNode = node.children?.find((child) => child.role === 'Caption');
    const caption = captionNode ? inlines(captionNode) : undefined;
    const image = context.figureImages?.get(node);
    // a check box or bullet drawn as a shape: decorative, unless its author described it
    if (image === 'mark') return { kind: 'figure', page, ...(alt ? { alt } : {}), decorative: !alt, needsAlt: false };
    return {
      kind: 'figure',
      page,
      ...(image ? { image } : {}),
      ...(alt ? { alt } : {}),
      ...(caption && caption.length > 0 ? { caption } : {}),
      decorative: false,
      needsAlt: !alt,
    };
  };

  const CELL_BLOCK_ROLES = new Set(['L', 'Figure']);
  const containsCellBlock = (node: StructNode): boolean =>
    (node.children ?? []).some((child) => !child.type && (CELL_BLOCK_ROLES.has(child.role ?? '') || containsCellBlock(child)));

  /** A cell holding a list or a figure (an infobox's logo, its list of links): its text as paragraphs around them. */
  const cellBlocks = (cell: StructNode): Block[] => {
    const out: Block[] = [];
    let pending: Run[] = [];
    const flush = () => {
      const content = runsToInlines(pending);
      pending = [];
      if (inlineText(content).trim() !== '') out.push({ kind: 'paragraph', page, content });
    };
    const walk = (node: StructNode) => {
      for (const child of node.children ?? []) {
        if (!child.type && child.role === 'L') {
          flush();
          out.push(list(child));
        } else if (!child.type && child.role === 'Figure') {
          flush();
          out.push(figure(child));
        } else if (!child.type && containsCellBlock(child)) walk(child);
        else runs(child, {}, pending);
      }
    };
    walk(cell);
    flush();
    return out;
  };

  const table = (node: StructNode) => {
    const rows: TableCell[][] = [];
    let caption: Inline[] | undefined;
    const visitRows = (parent: StructNode, section: string) => {
      for (const child of parent.children ?? []) {
        if (child.role === 'TR') {
          const row: TableCell[] = [];
          for (const cell of child.children ?? []) {
            if (cell.role !== 'TH' && cell.role !== 'TD') continue;
            const header = cell.role === 'TH';
            const scope = cell.scope === 'Column' ? 'col' : cell.scope === 'Row' ? 'row' : undefined;
            const entry: TableCell = { header, content: inlines(cell) };
            if (containsCellBlock(cell)) entry.blocks = cellBlocks(cell);
            if (header) entry.scope = scope ?? (section === 'THead' ? 'col' : undefined);
            if (entry.scope === undefined) delete entry.scope;
            row.push(entry);
          }
          rows.push(row);
        } else if (child.role === 'THead' || child.role === 'TBody' || child.role === 'TFoot') {
          visitRows(child, child.role);
        } else if (child.role === 'Caption') {
          caption = inlines(child);
        }
      }
    };
    visitRows(node, '');
    // a header cell without /Scope: a row of headers heads columns; a row's first header heads its row
    for (const [rowIndex, row] of rows.entries()) {
      const allHeaders = row.length > 0 && row.every((cell) => cell.header);
      for (const [cellIndex, cell] of row.entries()) {
        if (cell.header && !cell.scope) cell.scope = allHeaders || rowIndex === 0 ? 'col' : cellIndex === 0 ? 'row' : 'col';
      }
    }
    if (rows.length > 0) blocks.push({ kind: 'table', page, ...(caption ? { caption } : {}), rows });
  };

  /**
   * A Note of running text is a footnote; a Note wrapping a figure, a table or
   * a caption (LaTeX's floats) is a container and is read as one.
   */
  const footnote = (node: StructNode): Block | undefined => {
    if (containsRole(node, NOTE_CONTAINER_ROLES)) return undefined;
    const labelNode = (node.children ?? []).find((child) => child.role === 'Lbl');
    const label = labelNode ? plainText(labelNode, context.textById).trim() : '';
    const out: Run[] = [];
    for (const child of node.children ?? []) if (child !== labelNode) runs(child, {}, out);
    const content = runsToInlines(out);
    if (inlineText(content).trim() === '') return undefined;
    return { kind: 'footnote', page, id: notes.get(label)?.id ?? `p${page}-note-${blocks.length}`, label, content };
  };

  const visit = (node: StructNode) => {
    if (node.type === 'content') {
      // loose content directly under a grouping element reads as a paragraph
      const content = inlines({ children: [node] });
      if (content.length > 0) blocks.push({ kind: 'paragraph', page, content });
      return;
    }
    if (node.type) return;
    const role = node.role ?? '';
    const level = headingLevel(role);
    if (level) {
      const content = inlines(node);
      if (inlineText(content).trim() !== '') blocks.push({ kind: 'heading', page, level, content });
      return;
    }
    switch (role) {
      case 'L':
        blocks.push(list(node));
        return;
      case 'Table':
        table(node);
        return;
      case 'Figure':
        blocks.push(figure(node));
        return;
      case 'Caption': {
        // a caption right after its figure belongs to it
        const last = blocks.at(-1);
        const content = inlines(node);
        if (last?.kind === 'figure' && !last.caption && content.length > 0) {
          last.caption = content;
          return;
        }
        if (content.length > 0) blocks.push({ kind: 'paragraph', page, content });
        return;
      }
      case 'Formula': {
        const alt = cleanString(node.alt);
        const text = alt || inlineText(inlines(node)).trim();
        const math = formulaMath(node);
        // without MathML, TeX read from the formula's own text (never from an alt text that describes it in words)
        const tex = math?.tex ?? (math ? undefined : formulaToTex(text));
        if (text || math)
          blocks.push({
            kind: 'formula',
            page,
            text: text || math?.text || '',
            ...(math ? { mathml: math.mathml } : {}),
            ...(tex ? { tex } : {}),
            display: true,
          });
        return;
      }
      case 'Code': {
        const out: Run[] = [];
        runs(node, {}, out);
        const text = out
          .map((run) => run.text)
          .join('')
          .trimEnd();
        if (text) blocks.push({ kind: 'code', page, text });
        return;
      }
      case 'BlockQuote': {
        const inner = structTreeToBlocks({ children: node.children }, context);
        if (inner.length > 0) blocks.push({ kind: 'blockquote', page, children: inner });
        return;
      }
      case 'Artifact':
        return;
      case 'Note':
      case 'FENote': {
        const note = footnote(node);
        if (note) {
          blocks.push(note);
          return;
        }
        break;
      }
      default:
        break;
    }
    if (hasBlockChild(node)) {
      // a paragraph holding a figure: the figure becomes its own block, the rest a paragraph around it
      let pending: Run[] = [];
      const flush = () => {
        const content = runsToInlines(pending);
        if (inlineText(content).trim() !== '') blocks.push({ kind: 'paragraph', page, content });
        pending = [];
      };
      // a footnote tagged in the middle of its paragraph (LaTeX) follows the paragraph instead of cutting it in two
      const deferred: Block[] = [];
      // text tagged as a row of NonStruct pieces between Links, no P around it (a browser's "Save as PDF"), is one
      // flow: its pieces read on, and a piece opens a paragraph where the page sets it apart (paragraphsApart)
      const flowing = (node.children ?? []).some((child) => child.role !== undefined && FLOW_ROLES.has(child.role));
      for (const child of node.children ?? []) {
        if (flowing && child.role === 'NonStruct' && inlineOnly(child)) {
          // the piece's first marked content, in the tree's order
          if (context.apart?.has(referencedIds(child).values().next().value ?? '')) flush();
          runs(child, {}, pending);
          continue;
        }
        const note = (child.role === 'Note' || child.role === 'FENote') && (role === 'P' || role === 'Span') ? footnote(child) : undefined;
        if (note) {
          deferred.push(note);
          continue;
        }
        if (child.role === 'Formula' && !formulaMath(child)?.display && (role === 'P' || role === 'Span' || role === 'LBody')) {
          // an inline formula reads inside its sentence: its alt text, or the text it draws
          const alt = cleanString(child.alt);
          if (alt) pending.push({ text: alt });
          else runs(child, {}, pending);
        } else if (!child.type && child.role && BLOCK_ROLES.has(child.role) && child.role !== 'Lbl') {
          flush();
          visit(child);
        } else if (child.type === 'content' && (role === 'P' || role === 'Span' || role === 'Link')) {
          runs(child, {}, pending);
        } else if (!child.type) {
          runs(child, {}, pending);
        } else {
          flush();
          visit(child);
        }
      }
      flush();
      blocks.push(...deferred);
      return;
    }
    const content = inlines(node);
    if (inlineText(content).trim() !== '') blocks.push({ kind: 'paragraph', page, content });
  };

  for (const child of root.children ?? []) visit(child);
  return blocks;
}

const NOTE_CONTAINER_ROLES = new Set(['Figure', 'Table', 'Caption', 'L', 'Formula']);

/**
 * The marked contents that open a line set apart from the line before it by
 * more than 1.6 times its text's size: paragraphs a page spaces
 * apart, where its tags do not say where a paragraph ends.
 */
export function paragraphsApart(items: TextItem[]): Set<string> {
  const apart = new Set<string>();
  let previous: TextItem | undefined;
  for (const item of items) {
    if (item.artifact || item.text.trim() === '') continue;
    if (item.mcid && previous && previous.mcid !== item.mcid && previous.y - item.y > Math.max(previous.size, item.size) * 1.6) apart.add(item.mcid);
    previous = item;
  }
  return apart;
}

/** Roles that sit inside a line of text, as a link does. */
const FLOW_ROLES = new Set(['Link', 'Span', 'Reference', 'Quote', 'Em', 'Strong']);

/** Whether a subtree holds only text and elements set inside a line (its NonStruct wrappers included). */
function inlineOnly(node: StructNode): boolean {
  return (node.children ?? []).every(
    (child) => child.type !== undefined || ((child.role === 'NonStruct' || FLOW_ROLES.has(child.role ?? '')) && inlineOnly(child)),
  );
}

function containsRole(node: StructNode, roles: Set<string>): boolean {
  return (node.children ?? []).some((child) => !child.type && (roles.has(child.role ?? '') || containsRole(child, roles)));
}

/** The text a subtree draws, from the text layer (for labels: short, no alt texts). */
function plainText(node: StructNode, textById: Map<string, string>): string {
  if (node.type === 'content' && node.id) return textById.get(node.id) ?? '';
  return (node.children ?? []).map((child) => plainText(child, textById)).join('');
}

/**
 * The page's footnote Notes by label, so a Link, Lbl or Reference with the
 * same text links to its note. Ids carry the page: labels restart on pages,
 * and a footnote and its reference meet on the same page.
 */
function collectNotes(root: StructNode, page: number, textById: Map<string, string>): Map<string, { id: string; referenced: boolean }> {
  const found = new Map<string, { id: string; referenced: boolean }>();
  const walk = (node: StructNode) => {
    if ((node.role === 'Note' || node.role === 'FENote') && !containsRole(node, NOTE_CONTAINER_ROLES)) {
      const labelNode = (node.children ?? []).find((child) => child.role === 'Lbl');
      const label = labelNode ? plainText(labelNode, textById).trim() : '';
      if (label && !found.has(label)) found.set(label, { id: `p${page}-${label}`, referenced: false });
      return;
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(root);
  return found;
}

/** The number in a marked-content id ("p304R_mc11" → 11). */
export const mcidOf = (id: string) => Number(/_mc(\d+)$/.exec(id)?.[1] ?? Number.NaN);

/**
 * A page's tree with each marked-content id claimed once. A producer that rewrites a tagged file (an OCR tool
 * re-saving a Word export) can leave an element that ran over from the page before pointing at this page's ids:
 * the paragraph that ended the last page then starts with this page's last paragraph (the UN declaration's
 * preamble reading "… or punishment.teaching and education …"). Of two claims, the one that follows the id before
 * it in the tree's order (…, mc10, mc11) stands, else the last; the others are dropped, and with them the text read
 * out of place.
 */
export function withSingleClaims(root: StructNode): StructNode {
  const claims = new Map<string, { node: StructNode; after: number }[]>();
  let last = Number.NaN;
  const walk = (node: StructNode) => {
    for (const child of node.children ?? []) {
      if (child.type === 'content' && child.id) {
        const claim = { node: child, after: last };
        const earlier = claims.get(child.id);
        if (earlier) earlier.push(claim);
        else claims.set(child.id, [claim]);
        last = mcidOf(child.id);
      } else walk(child);
    }
  };
  walk(root);
  const dropped = new Set<StructNode>();
  for (const [id, all] of claims) {
    if (all.length < 2) continue;
    const keeper = all.find((claim) => claim.after === mcidOf(id) - 1) ?? all.at(-1)!;
    for (const claim of all) if (claim !== keeper) dropped.add(claim.node);
  }
  if (dropped.size === 0) return root;
  const prune = (node: StructNode): StructNode =>
    node.children ? { ...node, children: node.children.filter((child) => !dropped.has(child)).map(prune) } : node;
  return prune(root);
}

/** All marked-content ids the tree references, to find text the tags forgot. */
export function referencedIds(node: StructNode, into = new Set<string>()): Set<string> {
  if (node.type === 'content' && node.id) into.add(node.id);
  for (const child of node.children ?? []) referencedIds(child, into);
  return into;
}

/**
 * The MathML a tagged formula carries (PDF 2.0 associated file, exposed by
 * pdf.js), re-serialised through the same allow-list as the vision backend's
 * answers: it comes from the document, so it is untrusted markup.
 */
function formulaMath(node: StructNode): { mathml: string; display: boolean; tex?: string; text: string } | undefined {
  if (typeof node.mathML !== 'string' || !node.mathML.includes('<math')) return undefined;
  const root = parseHtml(node.mathML);
  const find = (element: ParsedElement): ParsedElement | undefined => {
    if (element.name === 'math') return element;
    for (const child of element.children) {
      if (child.type !== 'element') continue;
      const found = find(child);
      if (found) return found;
    }
    return undefined;
  };
  const math = find(root as ParsedElement);
  if (!math) return undefined;
  const display = math.attrs.display === 'block';
  const texts: string[] = [];
  let tex: string | undefined;
  const walk = (element: ParsedElement) => {
    for (const child of element.children) {
      if (child.type === 'text') texts.push(child.text);
      else if (child.name === 'annotation' && /tex|latex/i.test(child.attrs.encoding ?? ''))
        tex = child.children
          .map((part) => (part.type === 'text' ? part.text : ''))
          .join('')
          .trim();
      else if (child.name !== 'annotation' && child.name !== 'annotation-xml') walk(child);
    }
  };
  walk(math);
  return { mathml: serializeMathml(math as never, display), display, ...(tex ? { tex } : {}), text: texts.join('').replace(/\s+/g, ' ').trim() };
}

type ParsedElement = { type: 'element'; name: string; attrs: Record<string, string>; children: ({ type: 'text'; text: string } | ParsedElement)[] };
