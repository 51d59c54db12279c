import { blocksText, countWords } from '../page-content.ts';
import type { Block, DocumentMeta, Inline, ListBlock, PageResult, TableCell } from '../model.ts';

/**
 * The document's language, settled once its pages are known. The metadata's
 * language is read before any page is converted, from the catalog's /Lang or
 * the first pages' text layer; a scanned document has neither, and only its
 * OCR'd pages know what they are written in. The language with the most
 * words becomes the document's, and the content of pages in another language
 * is marked with theirs, so a screen reader switches voice. Pages are tallied
 * as they stream in; nothing but the counts is kept.
 */
export type PageLanguages = {
  add(page: PageResult): void;
  /** the metadata with the document's language settled; call once every page is added */
  meta(): DocumentMeta;
  /** the page with its content marked when its language is not the document's */
  mark(page: PageResult): PageResult;
};

const primary = (lang: string) => lang.toLowerCase().split(/[-_]/)[0]!;

export function createPageLanguages(meta: DocumentMeta): PageLanguages {
  const words = new Map<string, { lang: string; words: number }>();
  let settled: DocumentMeta | undefined;
  const settle = () => {
    const top = [...words.values()].sort((a, b) => b.words - a.words)[0];
    // the declared or detected tag keeps its region ('de-CH') when the pages agree on the language
    const lang = !top || top.words === 0 || primary(top.lang) === primary(meta.lang) ? meta.lang : top.lang;
    return { ...meta, lang };
  };
  return {
    add(page) {
      const lang = page.lang ?? meta.lang;
      const entry = words.get(primary(lang)) ?? { lang, words: 0 };
      entry.words += countWords(blocksText(page.blocks));
      words.set(primary(lang), entry);
    },
    meta: () => (settled ??= settle()),
    mark(page) {
      const own = page.lang ?? meta.lang;
      const lang = (settled ??= settle()).lang;
      return primary(own) === primary(lang) ? page : { ...page, blocks: page.blocks.map((block) => markBlock(block, own)) };
    },
  };
}

function markBlock(block: Block, lang: string): Block {
  const mark = (content: Inline[]): Inline[] => (content.length > 0 ? [{ kind: 'lang', lang, children: content }] : content);
  const markList = (list: ListBlock): ListBlock => ({
    ...list,
    items: list.items.map((item) => ({ ...item, content: mark(item.content), ...(item.children ? { children: markList(item.children) } : {}) })),
  });
  const markCell = (cell: TableCell): TableCell => ({
    ...cell,
    content: mark(cell.content),
    ...(cell.blocks ? { blocks: cell.blocks.map((inner) => markBlock(inner, lang)) } : {}),
  });
  switch (block.kind) {
    case 'heading':
    case 'paragraph':
    case 'footnote':
      return { ...block, content: mark(block.content) };
    case 'list':
      return markList(block);
    case 'table':
      return { ...block, ...(block.caption ? { caption: mark(block.caption) } : {}), rows: block.rows.map((row) => row.map(markCell)) };
    case 'figure':
      return block.caption ? { ...block, caption: mark(block.caption) } : block;
    case 'blockquote':
      return { ...block, children: block.children.map((inner) => markBlock(inner, lang)) };
    default:
      return block;
  }
}
