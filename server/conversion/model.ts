/**
 * The document model every backend produces and every renderer consumes.
 * Plain JSON-serialisable data (figure bytes as base64) so a chunk worker can
 * store its pages and the assembler, possibly in another process, can read
 * them back. Every block remembers its page (1-based).
 */

export type Inline =
  | { kind: 'text'; text: string }
  | { kind: 'emphasis'; strong?: boolean; children: Inline[] }
  | { kind: 'link'; href: string; children: Inline[] }
  | { kind: 'lang'; lang: string; children: Inline[] }
  | { kind: 'code'; text: string }
  /** mathematics inside running text: its TeX, and the text the page has for it */
  | { kind: 'math'; tex: string; text: string }
  | { kind: 'footnoteRef'; id: string; label: string }
  | { kind: 'lineBreak' }
  /**
   * Where a page ends inside a paragraph that runs over it (joinBrokenParagraphs):
   * the page marker a block-level pageBreak would be, kept at its exact place.
   */
  | { kind: 'pageBreak'; label: string };

export type TableCell = {
  header: boolean;
  /** for header cells: what they head */
  scope?: 'col' | 'row' | 'colgroup' | 'rowgroup';
  rowSpan?: number;
  colSpan?: number;
  content: Inline[];
  /**
   * Block structure of a cell that holds more than running text (a list in an
   * infobox cell). `content` still carries the cell's whole text inline, for
   * consumers that read text only; renderers that can nest blocks prefer this.
   */
  blocks?: Block[];
};

export type ListItem = { content: Inline[]; children?: ListBlock };
export type ListBlock = { kind: 'list'; page: number; ordered: boolean; start?: number; items: ListItem[] };

/**
 * One AcroForm field as filled in: what it is, what it is called (its /TU,
 * else the words printed beside it, else its field name) and its value.
 */
export type FormField =
  | { kind: 'text'; name: string; label: string; value: string; multiline?: boolean }
  | { kind: 'checkbox'; name: string; label: string; value: string; checked: boolean }
  /** a radio group: `value` is the chosen option's label, '' when none is */
  | { kind: 'radio'; name: string; label: string; value: string; options: string[] }
  /** a list or combo box: `value` is what it shows for the chosen export value(s) */
  | { kind: 'choice'; name: string; label: string; value: string; options: string[] };

export type Block =
  | {
      kind: 'heading';
      page: number;
      level: 1 | 2 | 3 | 4 | 5 | 6;
      content: Inline[];
      id?: string;
      /** how an inferred heading is set (points, bold): rendering levels headings across the whole document by it */
      style?: { size: number; bold: boolean };
    }
  | {
      kind: 'paragraph';
      page: number;
      content: Inline[];
      /** font size (points) of the paragraph's body text, where the backend knows it: a paragraph runs on over a break only at its own size */
      size?: number;
    }
  | ListBlock
  | { kind: 'table'; page: number; caption?: Inline[]; rows: TableCell[][]; uncertain?: boolean }
  | {
      kind: 'figure';
      page: number;
      /** base64 of the image bytes; absent when the figure could not be extracted */
      image?: { mime: 'image/png' | 'image/jpeg'; base64: string; width: number; height: number };
      alt?: string;
      caption?: Inline[];
      decorative: boolean;
      /** true when nobody (author tag, model) supplied alt text: a reviewer must write it */
      needsAlt: boolean;
      /**
       * Words drawn inside the picture (a chart's axis labels and legend), in
       * reading order: kept with the figure instead of the text flow, where
       * they would be noise, and a start for whoever writes the alt text.
       */
      text?: string;
    }
  /** `tag`: a display formula's equation number as printed beside it ("2.3"); its TeX carries it as \tag{2.3} */
  | { kind: 'formula'; page: number; text: string; mathml?: string; tex?: string; display: boolean; tag?: string }
  | {
      kind: 'footnote';
      page: number;
      id: string;
      label: string;
      content: Inline[];
      /**
       * The text goes on from the previous page's last footnote (no marker of
       * its own): joinContinuedFootnotes appends it there when the document is
       * assembled, and makes it a paragraph when there is no such note.
       */
      continued?: boolean;
    }
  | { kind: 'blockquote'; page: number; children: Block[] }
  | { kind: 'code'; page: number; text: string }
  /** the page's form fields with their values (a filled-in form keeps what was filled in) */
  | { kind: 'form'; page: number; fields: FormField[] }
  | { kind: 'pageBreak'; page: number; label: string };

export type Backend = 'local' | 'chunked-vision' | 'parser';
export type PageClass = 'standard' | 'complex';

/** One converted page: its blocks, how it was made and what it cost. */
export type PageResult = {
  page: number;
  /** page label as printed (roman numerals, etc.); falls back to the number */
  label: string;
  backend: Backend;
  classification: PageClass;
  /** why the page is complex: 'table', 'figure', 'multi-column', 'formula', 'ocr', 'low-coverage' */
  reasons: string[];
  blocks: Block[];
  warnings: string[];
  /** words of the page's text layer (0 for scans) */
  textLayerWords: number;
  ocr: boolean;
  /**
   * BCP 47 language of the page's text when the backend found it for this
   * page (OCR reads each scan in its own language); absent when it is the
   * document's. Rendering makes the language with the most words the
   * document's and marks the other pages' content with theirs.
   */
  lang?: string;
  /**
   * The title printed on the first page, read from its text layer once the
   * lying runs were re-read by OCR: the document's facts were read from the
   * lying layer, so a title only the repaired text shows comes from here.
   */
  title?: string;
  timings: { ms: number };
  costUsd: number;
  /** vision backend: model id and prompt hash, for batch-lane reuse */
  model?: string;
  promptHash?: string;
  /** vision backend: the page's first answer came from a batch record (billed by the batch lane, not in costUsd) */
  batchServed?: boolean;
};

export type DocumentMeta = {
  title: string;
  /** the title is the file name: nothing in the document named it (a page's repaired text may still) */
  titleFromName?: boolean;
  lang: string;
  pageCount: number;
  tagged: boolean;
  author?: string;
  subject?: string;
  sourceName: string;
};

export type ConvertedDocument = { meta: DocumentMeta; pages: PageResult[] };
