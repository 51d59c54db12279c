import { Parser } from 'htmlparser2';
import type { Block, Inline, ListBlock, ListItem, TableCell } from '../../model.ts';

/**
 * Turns HTML written by someone else (a vision model, a document-parser API)
 * into the document model, keeping only what the model can express:
 * headings, paragraphs, lists, tables (caption, th/scope, spans), figures
 * (alt, caption, decorative), MathML formulas, blockquotes, code, footnotes,
 * emphasis, links and language changes. Nothing of the input's markup
 * survives except through these types, so scripts, styles, event attributes
 * and classes cannot reach our output; MathML is re-serialised from an
 * allow-list of elements and attributes. Unknown elements keep their text.
 */

type HtmlElement = { type: 'element'; name: string; attrs: Record<string, string>; children: HtmlNode[] };
type HtmlNode = { type: 'text'; text: string } | HtmlElement;

/** Dropped with everything inside: executable, styling or non-textual content. */
const DROPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'head',
  'title',
  'meta',
  'link',
  'base',
  'svg',
  'canvas',
  'audio',
  'video',
  'source',
  'track',
  'map',
  'input',
  'select',
  'param',
]);

/** Elements that hold blocks; their loose inline content becomes paragraphs. */
const CONTAINERS = new Set([
  '#root',
  'html',
  'body',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'nav',
  'aside',
  'address',
  'details',
  'summary',
  'fieldset',
  'form',
  'center',
  'dl',
  'dt',
  'dd',
  'hgroup',
  'search',
  'legend',
  'li',
  'caption',
  'figcaption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'td',
  'th',
  'hr',
]);

const BLOCK_ELEMENTS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'table', 'figure', 'blockquote', 'pre', ...CONTAINERS]);

const MATHML_ELEMENTS = new Set([
  'math',
  'mi',
  'mn',
  'mo',
  'ms',
  'mtext',
  'mspace',
  'mrow',
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
  'mtd',
  'mlabeledtr',
  'maligngroup',
  'malignmark',
  'semantics',
  'annotation',
]);

const MATHML_ATTRIBUTES = new Set([
  'display',
  'alttext',
  'mathvariant',
  'mathsize',
  'displaystyle',
  'scriptlevel',
  'stretchy',
  'fence',
  'separator',
  'form',
  'lspace',
  'rspace',
  'largeop',
  'movablelimits',
  'accent',
  'accentunder',
  'linethickness',
  'bevelled',
  'notation',
  'open',
  'close',
  'separators',
  'columnalign',
  'rowalign',
  'columnspan',
  'rowspan',
  'columnlines',
  'rowlines',
  'frame',
  'width',
  'height',
  'depth',
  'encoding',
  'dir',
  'intent',
  'arg',
  'symmetric',
  'minsize',
  'maxsize',
  'columnspacing',
  'rowspacing',
]);

const TEX_ENCODINGS = new Set(['application/x-tex', 'tex', 'application/x-latex', 'latex']);
const LANG_PATTERN = /^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i;
const SAFE_HREF = /^(https?:|mailto:|#)/i;
/** Bounds on spans a malicious or confused input could blow up a renderer with. */
const MAX_SPAN = 1000;

export function parseHtml(html: string): HtmlElement {
  const root: HtmlElement = { type: 'element', name: '#root', attrs: {}, children: [] };
  const stack: HtmlElement[] = [root];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        const element: HtmlElement = { type: 'element', name, attrs, children: [] };
        stack.at(-1)!.children.push(element);
        stack.push(element);
      },
      ontext(text) {
        stack.at(-1)!.children.push({ type: 'text', text });
      },
      onclosetag() {
        if (stack.length > 1) stack.pop();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();
  return root;
}

/** The blocks of one page of HTML (a fragment or a whole document). */
export function htmlToBlocks(html: string, page: number): Block[] {
  return new Converter(page).blocks(parseHtml(html));
}

function textOf(node: HtmlNode): string {
  if (node.type === 'text') return node.text;
  if (DROPPED.has(node.name)) return '';
  return node.children.map(textOf).join('');
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function isDecorative(element: HtmlElement): boolean {
  const role = element.attrs.role;
  return element.attrs.alt === '' || role === 'presentation' || role === 'none' || element.attrs['aria-hidden'] === 'true';
}

function find(element: HtmlElement, names: Set<string>): HtmlElement | undefined {
  for (const child of element.children) {
    if (child.type !== 'element' || DROPPED.has(child.name)) continue;
    if (names.has(child.name)) return child;
    const inner = find(child, names);
    if (inner) return inner;
  }
  return undefined;
}

function isDisplayMath(element: HtmlElement): boolean {
  return element.name === 'math' && element.attrs.display === 'block';
}

function hasBlockDescendant(element: HtmlElement): boolean {
  return element.children.some(
    (child) => child.type === 'element' && !DROPPED.has(child.name) && (BLOCK_ELEMENTS.has(child.name) || isDisplayMath(child) || hasBlockDescendant(child)),
  );
}

function span(value: string | undefined): number | undefined {
  const parsed = Number.parseInt(value ?? '', 10);
  return Number.isFinite(parsed) && parsed > 1 ? Math.min(parsed, MAX_SPAN) : undefined;
}

class Converter {
  readonly page: number;
  /** lang declared by the nearest block ancestor; its inline content is wrapped in a language change */
  blockLang: string | undefined;

  constructor(page: number) {
    this.page = page;
  }

  /** Blocks of a container: block children convert on their own, runs of inline content become paragraphs. */
  blocks(container: HtmlElement): Block[] {
    const out: Block[] = [];
    let run: HtmlNode[] = [];
    const flush = () => {
      if (run.length > 0) this.paragraph(run, out);
      run = [];
    };
    for (const child of container.children) {
      if (child.type === 'text' || !this.isBlock(child)) {
        run.push(child);
        continue;
      }
      flush();
      this.block(child, out);
    }
    flush();
    return out;
  }

  isBlock(element: HtmlElement): boolean {
    if (DROPPED.has(element.name)) return true;
    if (element.name === 'img' || element.name === 'math') return element.name === 'img' || isDisplayMath(element);
    if (BLOCK_ELEMENTS.has(element.name)) return true;
    if (element.attrs.role === 'doc-footnote') return true;
    return !INLINE_ELEMENTS.has(element.name) && hasBlockDescendant(element);
  }

  /** Runs `convert` with the element's lang (if it declares a valid one) as the inherited block language. */
  scoped<T>(element: HtmlElement, convert: () => T): T {
    const lang = element.attrs.lang ?? element.attrs['xml:lang'];
    if (!lang || !LANG_PATTERN.test(lang)) return convert();
    const outer = this.blockLang;
    this.blockLang = lang;
    try {
      return convert();
    } finally {
      this.blockLang = outer;
    }
  }

  block(element: HtmlElement, out: Block[]): void {
    this.scoped(element, () => this.blockContent(element, out));
  }

  blockContent(element: HtmlElement, out: Block[]): void {
    const page = this.page;
    const name = element.name;
    if (DROPPED.has(name)) return;
    if (element.attrs.role === 'doc-footnote' && element.attrs.id) {
      const hoisted: Block[] = [];
      const content = this.inlines(element.children, hoisted);
      const label = collapse(textOf(element)).match(/^\[?(\w{1,4})[\].)]?\s/)?.[1] ?? element.attrs.id.replace(/^\D+/, '');
      if (content.length > 0) out.push({ kind: 'footnote', page, id: this.noteId(element.attrs.id), label: label || element.attrs.id, content });
      out.push(...hoisted);
      return;
    }
    const heading = /^h([1-6])$/.exec(name);
    if (heading) {
      const hoisted: Block[] = [];
      const content = this.inlines(element.children, hoisted);
      if (content.length > 0) out.push({ kind: 'heading', page, level: Number(heading[1]) as 1 | 2 | 3 | 4 | 5 | 6, content });
      out.push(...hoisted);
      return;
    }
    switch (name) {
      case 'p':
        return this.paragraph(element.children, out);
      case 'ul':
      case 'ol': {
        const list = this.list(element);
        if (list) out.push(list);
        return;
      }
      case 'table': {
        const table = this.table(element);
        if (table) out.push(table);
        return;
      }
      case 'figure':
        return this.figure(element, out);
      case 'img':
        out.push(this.image(element, undefined));
        return;
      case 'math':
        out.push(this.formula(element, true));
        return;
      case 'blockquote': {
        const children = this.blocks(element);
        if (children.length > 0) out.push({ kind: 'blockquote', page, children });
        return;
      }
      case 'pre': {
        const text = textOf(element).replace(/^\n/, '').replace(/\s+$/, '');
        if (text) out.push({ kind: 'code', page, text });
        return;
      }
      default:
        out.push(...this.blocks(element));
    }
  }

  /** A paragraph, or a formula block when the paragraph holds nothing but one math element. */
  paragraph(nodes: HtmlNode[], out: Block[]): void {
    const meaningful = nodes.filter((node) => node.type === 'element' || node.text.trim() !== '');
    const only = meaningful[0];
    if (meaningful.length === 1 && only?.type === 'element' && only.name === 'math') {
      out.push(this.formula(only, true));
      return;
    }
    const hoisted: Block[] = [];
    const content = this.inlines(nodes, hoisted);
    if (content.length > 0) out.push({ kind: 'paragraph', page: this.page, content });
    out.push(...hoisted);
  }

  list(element: HtmlElement): ListBlock | undefined {
    const items: ListItem[] = [];
    for (const child of element.children) {
      if (child.type === 'text') {
        if (child.text.trim()) items.push({ content: cleanInlines([{ kind: 'text', text: child.text }]) });
        continue;
      }
      if (DROPPED.has(child.name)) continue;
      if (child.name === 'ul' || child.name === 'ol') {
        // A list nested directly in a list belongs to the item before it.
        const nested = this.list(child);
        const previous = items.at(-1);
        if (nested && previous) previous.children = mergeLists(previous.children, nested);
        else if (nested) items.push({ content: [], children: nested });
        continue;
      }
      const item = this.listItem(child);
      if (item) items.push(item);
    }
    if (items.length === 0) return undefined;
    const ordered = element.name === 'ol';
    const start = Number.parseInt(element.attrs.start ?? '', 10);
    return { kind: 'list', page: this.page, ordered, ...(ordered && Number.isFinite(start) && start !== 1 ? { start } : {}), items };
  }

  listItem(element: HtmlElement): ListItem | undefined {
    return this.scoped(element, () => this.listItemContent(element));
  }

  listItemContent(element: HtmlElement): ListItem | undefined {
    let children: ListBlock | undefined;
    const parts: HtmlNode[][] = [[]];
    for (const child of element.children) {
      if (child.type === 'element' && (child.name === 'ul' || child.name === 'ol')) {
        const nested = this.list(child);
        if (nested) children = mergeLists(children, nested);
        continue;
      }
      if (child.type === 'element' && this.isBlock(child) && !DROPPED.has(child.name)) parts.push([child], []);
      else parts.at(-1)!.push(child);
    }
    const content = joinWithBreaks(parts.map((part) => this.inlines(part, undefined)));
    if (content.length === 0 && !children) return undefined;
    return children ? { content, children } : { content };
  }

  table(element: HtmlElement): Block | undefined {
    let caption: Inline[] | undefined;
    const rows: { cells: HtmlElement[]; inHead: boolean }[] = [];
    const collectRows = (parent: HtmlElement, inHead: boolean) => {
      for (const child of parent.children) {
        if (child.type !== 'element' || DROPPED.has(child.name)) continue;
        if (child.name === 'caption') caption = this.flatInlines(child);
        else if (child.name === 'thead') collectRows(child, true);
        else if (child.name === 'tbody' || child.name === 'tfoot') collectRows(child, false);
        else if (child.name === 'tr') {
          const cells = child.children.filter((cell): cell is HtmlElement => cell.type === 'element' && (cell.name === 'th' || cell.name === 'td'));
          if (cells.length > 0) rows.push({ cells, inHead });
        }
      }
    };
    collectRows(element, false);
    if (rows.length === 0) return undefined;
    const tableRows: TableCell[][] = rows.map(({ cells, inHead }) => {
      const allHeaders = cells.every((cell) => cell.name === 'th');
      return cells.map((cell, index) => {
        const header = cell.name === 'th';
        const tableCell: TableCell = { header, content: this.flatInlines(cell) };
        if (header) {
          const scope = cell.attrs.scope;
          tableCell.scope =
            scope === 'col' || scope === 'row' || scope === 'colgroup' || scope === 'rowgroup' ? scope : inHead || allHeaders || index > 0 ? 'col' : 'row';
        }
        const rowSpan = span(cell.attrs.rowspan);
        const colSpan = span(cell.attrs.colspan);
        if (rowSpan) tableCell.rowSpan = rowSpan;
        if (colSpan) tableCell.colSpan = colSpan;
        return tableCell;
      });
    });
    return { kind: 'table', page: this.page, ...(caption && caption.length > 0 ? { caption } : {}), rows: tableRows };
  }

  figure(element: HtmlElement, out: Block[]): void {
    const captionElement = find(element, new Set(['figcaption']));
    const caption = captionElement ? this.flatInlines(captionElement) : undefined;
    const image = find(element, new Set(['img']));
    if (image) {
      out.push(this.image(image, caption, element));
      return;
    }
    // Figures are also used to wrap tables and equations: keep what they hold.
    const table = find(element, new Set(['table']));
    if (table) {
      const block = this.table(table);
      if (block?.kind === 'table') out.push(block.caption || !caption?.length ? block : { ...block, caption });
      return;
    }
    const math = find(element, new Set(['math']));
    if (math) {
      out.push(this.formula(math, true));
      return;
    }
    const alt = element.attrs['aria-label'];
    out.push({
      kind: 'figure',
      page: this.page,
      ...(alt ? { alt } : {}),
      ...(caption?.length ? { caption } : {}),
      decorative: false,
      needsAlt: !alt,
    });
  }

  image(image: HtmlElement, caption: Inline[] | undefined, figure?: HtmlElement): Block {
    const decorative = isDecorative(image) || (figure ? isDecorative(figure) : false);
    const alt = collapse(image.attrs.alt ?? image.attrs['aria-label'] ?? figure?.attrs['aria-label'] ?? '');
    return {
      kind: 'figure',
      page: this.page,
      ...(alt ? { alt } : {}),
      ...(caption?.length ? { caption } : {}),
      decorative: decorative && !alt,
      needsAlt: !alt && !decorative,
    };
  }

  formula(math: HtmlElement, display: boolean): Block {
    const annotation = find(math, new Set(['annotation']));
    const tex = annotation && TEX_ENCODINGS.has((annotation.attrs.encoding ?? '').toLowerCase()) ? collapse(textOf(annotation)) : undefined;
    const text = collapse(math.attrs.alttext ?? math.attrs['aria-label'] ?? '') || mathText(math) || tex || '';
    return { kind: 'formula', page: this.page, text, mathml: serializeMathml(math, display), ...(tex ? { tex } : {}), display };
  }

  /** Inline content of an element whose block children (paragraphs in a cell, say) are joined by line breaks. */
  flatInlines(element: HtmlElement): Inline[] {
    return this.scoped(element, () => this.flatInlinesContent(element));
  }

  flatInlinesContent(element: HtmlElement): Inline[] {
    const parts: HtmlNode[][] = [[]];
    for (const child of element.children) {
      if (child.type === 'element' && this.isBlock(child) && !DROPPED.has(child.name)) parts.push([child], []);
      else parts.at(-1)!.push(child);
    }
    return joinWithBreaks(parts.map((part) => this.inlines(part, undefined)));
  }

  /**
   * Inline content. Images met inline go to `hoisted` as figures (the model has
   * no inline images); without a place to hoist to, their alt text stays inline.
   */
  inlines(nodes: HtmlNode[], hoisted: Block[] | undefined): Inline[] {
    const content = cleanInlines(nodes.flatMap((node) => this.inline(node, hoisted)));
    return this.blockLang && content.length > 0 ? [{ kind: 'lang', lang: this.blockLang, children: content }] : content;
  }

  inline(node: HtmlNode, hoisted: Block[] | undefined): Inline[] {
    if (node.type === 'text') return [{ kind: 'text', text: node.text }];
    if (DROPPED.has(node.name)) return [];
    const children = () => node.children.flatMap((child) => this.inline(child, hoisted));
    let result: Inline[];
    switch (node.name) {
      case 'br':
        return [{ kind: 'lineBreak' }];
      case 'img': {
        const figure = this.image(node, undefined);
        if (hoisted) {
          hoisted.push(figure);
          return [];
        }
        return figure.kind === 'figure' && figure.alt ? [{ kind: 'text', text: ` ${figure.alt} ` }] : [];
      }
      case 'math': {
        // an inline formula keeps its TeX where it has one; else the reader gets its words
        const formula = this.formula(node, false);
        if (formula.kind !== 'formula' || !(formula.text || formula.tex)) return [];
        const text = formula.text || formula.tex!;
        return formula.tex
          ? [
              { kind: 'text', text: ' ' },
              { kind: 'math', tex: formula.tex, text },
              { kind: 'text', text: ' ' },
            ]
          : [{ kind: 'text', text: ` ${text} ` }];
      }
      case 'code':
      case 'kbd':
      case 'samp': {
        const text = textOf(node).replace(/\s+/g, ' ');
        result = text.trim() ? [{ kind: 'code', text }] : [];
        break;
      }
      case 'em':
      case 'i':
      case 'cite':
      case 'dfn':
      case 'var':
        result = [{ kind: 'emphasis', children: children() }];
        break;
      case 'strong':
      case 'b':
        result = [{ kind: 'emphasis', strong: true, children: children() }];
        break;
      case 'a': {
        const href = node.attrs.href?.trim();
        const inner = children();
        if (href?.startsWith('#') && (node.attrs.role === 'doc-noteref' || /^#fn/i.test(href))) {
          result = [{ kind: 'footnoteRef', id: this.noteId(href.slice(1)), label: collapse(textOf(node)) || href.slice(1) }];
        } else {
          result = href && SAFE_HREF.test(href) ? [{ kind: 'link', href, children: inner }] : inner;
        }
        break;
      }
      default:
        result = this.isBlock(node) ? [{ kind: 'text', text: ' ' }, ...children(), { kind: 'text', text: ' ' }] : children();
    }
    const lang = node.attrs.lang ?? node.attrs['xml:lang'];
    return lang && LANG_PATTERN.test(lang) ? [{ kind: 'lang', lang, children: result }] : result;
  }

  /** Footnote ids are per page in the input; prefixing keeps them unique in the document. */
  noteId(id: string): string {
    return `p${this.page}-${id}`;
  }
}

const INLINE_ELEMENTS = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'br',
  'cite',
  'code',
  'data',
  'del',
  'dfn',
  'em',
  'font',
  'i',
  'img',
  'ins',
  'kbd',
  'label',
  'mark',
  'math',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'wbr',
]);

function mathText(math: HtmlElement): string {
  const walk = (node: HtmlNode): string => {
    if (node.type === 'text') return node.text;
    if (node.name === 'annotation' || !MATHML_ELEMENTS.has(node.name)) return '';
    return node.children.map(walk).join(' ');
  };
  return collapse(walk(math));
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** MathML re-serialised from the allow-list; anything else inside the formula is dropped. */
export function serializeMathml(math: HtmlElement, display: boolean): string {
  const walk = (node: HtmlNode): string => {
    if (node.type === 'text') return escapeXml(node.text);
    if (!MATHML_ELEMENTS.has(node.name)) return '';
    const attrs = Object.entries(node.attrs).filter(([name, value]) => MATHML_ATTRIBUTES.has(name) && !/^\s*(javascript|data|vbscript):/i.test(value));
    if (node === math) {
      const kept = attrs.filter(([name]) => name !== 'display' && name !== 'xmlns');
      attrs.length = 0;
      attrs.push(['xmlns', 'http://www.w3.org/1998/Math/MathML'], ...(display ? [['display', 'block'] as [string, string]] : []), ...kept);
    }
    const open = [node.name, ...attrs.map(([name, value]) => `${name}="${escapeXml(value)}"`)].join(' ');
    return `<${open}>${node.children.map(walk).join('')}</${node.name}>`;
  };
  return walk(math);
}

function mergeLists(existing: ListBlock | undefined, extra: ListBlock): ListBlock {
  return existing ? { ...existing, items: [...existing.items, ...extra.items] } : extra;
}

function joinWithBreaks(parts: Inline[][]): Inline[] {
  const nonEmpty = parts.filter((part) => part.length > 0);
  return nonEmpty.flatMap((part, index) => (index === 0 ? part : [{ kind: 'lineBreak' } as Inline, ...part]));
}

/**
 * HTML whitespace rules for our inlines: runs collapse to one space, spaces
 * at the edges of the block and next to line breaks go, empty wrappers go,
 * neighbouring texts merge.
 */
function cleanInlines(inlines: Inline[]): Inline[] {
  const state = { pendingSpace: false, atStart: true };
  const walk = (list: Inline[]): Inline[] => {
    const out: Inline[] = [];
    for (const inline of list) {
      if (inline.kind === 'text') {
        const collapsed = inline.text.replace(/\s+/g, ' ');
        if (collapsed === '') continue;
        const leading = collapsed.startsWith(' ');
        const core = collapsed.trim();
        if (leading || state.pendingSpace) state.pendingSpace = !state.atStart;
        if (core === '') continue;
        pushText(out, (state.pendingSpace ? ' ' : '') + core);
        state.pendingSpace = collapsed.endsWith(' ');
        state.atStart = false;
        continue;
      }
      if (inline.kind === 'lineBreak') {
        if (state.atStart) continue;
        out.push(inline);
        state.pendingSpace = false;
        state.atStart = true;
        continue;
      }
      if (inline.kind === 'pageBreak') {
        out.push(inline);
        continue;
      }
      if (inline.kind === 'code' || inline.kind === 'footnoteRef' || inline.kind === 'math') {
        if (state.pendingSpace && !state.atStart) pushText(out, ' ');
        out.push(inline.kind === 'code' ? { kind: 'code', text: inline.text.trim() } : inline);
        state.pendingSpace = inline.kind === 'code' && inline.text.endsWith(' ');
        state.atStart = false;
        continue;
      }
      // A space before a wrapper belongs outside it, so link text does not start with a space.
      const startedAtStart = state.atStart;
      const leadingSpace = state.pendingSpace && !state.atStart;
      if (leadingSpace) state.pendingSpace = false;
      const children = walk(inline.children);
      if (children.length === 0) {
        state.pendingSpace ||= leadingSpace;
        state.atStart = startedAtStart;
        continue;
      }
      if (leadingSpace) pushText(out, ' ');
      out.push({ ...inline, children });
    }
    return out;
  };
  const result = hoistSpaces(walk(inlines));
  while (result.at(-1)?.kind === 'lineBreak') result.pop();
  return result;
}

/**
 * `a<em> b</em>` reads `a <em>b</em>`: a space opening a wrapper moves before
 * it. (A space closing one never gets in: the walk above only writes a space
 * once the next word arrives, which is outside the wrapper.)
 */
function hoistSpaces(list: Inline[]): Inline[] {
  const out: Inline[] = [];
  for (const inline of list) {
    if (inline.kind !== 'emphasis' && inline.kind !== 'link' && inline.kind !== 'lang') {
      if (inline.kind === 'text') pushText(out, inline.text);
      else out.push(inline);
      continue;
    }
    const children = hoistSpaces(inline.children);
    const first = children[0];
    if (first?.kind === 'text' && first.text.startsWith(' ')) {
      first.text = first.text.slice(1);
      if (first.text === '') children.shift();
      const previous = out.at(-1);
      if (out.length > 0 && !(previous?.kind === 'text' && previous.text.endsWith(' '))) pushText(out, ' ');
    }
    if (children.length > 0) out.push({ ...inline, children });
  }
  return out;
}

function pushText(out: Inline[], text: string): void {
  const last = out.at(-1);
  if (last?.kind === 'text') last.text += text;
  else out.push({ kind: 'text', text });
}
