import type { Block, ConvertedDocument, PageResult } from '../../server/conversion/model.ts';

/** A 2×2 red PNG: real bytes pdfkit can embed and a browser can show. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4z8DwnwGMgRQAH+4D/dJQfRoAAAAASUVORK5CYII=';

export function page(n: number, blocks: Block[], extra: Partial<PageResult> = {}): PageResult {
  return {
    page: n,
    label: String(n),
    backend: 'local',
    classification: 'standard',
    reasons: [],
    blocks,
    warnings: [],
    textLayerWords: 50,
    ocr: false,
    timings: { ms: 5 },
    costUsd: 0,
    ...extra,
  };
}

const t = (text: string) => ({ kind: 'text' as const, text });

/** Every block and inline kind of the model, over two pages (the second labelled "ii"). */
export function fullDocument(): ConvertedDocument {
  return {
    meta: { title: 'Annual <Report> & "Review"', lang: 'en-GB', pageCount: 2, tagged: false, sourceName: 'annual.pdf', author: 'Folio Tests' },
    pages: [
      page(1, [
        { kind: 'heading', page: 1, level: 1, content: [t('Annual report')] },
        {
          kind: 'paragraph',
          page: 1,
          content: [
            t('Intro with '),
            { kind: 'emphasis', strong: true, children: [t('bold')] },
            t(', '),
            { kind: 'emphasis', children: [t('italic')] },
            t(', a '),
            { kind: 'link', href: 'https://example.org/more', children: [t('link')] },
            t(', '),
            { kind: 'lang', lang: 'fr', children: [t('à bientôt')] },
            t(', '),
            { kind: 'code', text: 'x < y' },
            t(' and a note'),
            { kind: 'footnoteRef', id: 'n1', label: '1' },
            t(' <script>alert(1)</script>'),
            { kind: 'lineBreak' },
            { kind: 'link', href: 'javascript:alert(1)', children: [t('unsafe')] },
          ],
        },
        // Level 3 straight after level 1: must be repaired to h2.
        { kind: 'heading', page: 1, level: 3, content: [t('Highlights')] },
        {
          kind: 'list',
          page: 1,
          ordered: true,
          start: 3,
          items: [
            { content: [t('Third item')] },
            { content: [t('Fourth item')], children: { kind: 'list', page: 1, ordered: false, items: [{ content: [t('Nested bullet')] }] } },
          ],
        },
        {
          kind: 'table',
          page: 1,
          caption: [t('Revenue by region')],
          rows: [
            [
              { header: true, content: [t('Region')] },
              { header: true, colSpan: 2, content: [t('Revenue')] },
            ],
            [
              { header: true, content: [t('North')], rowSpan: 2 },
              { header: false, content: [t('10')] },
              { header: false, content: [t('12')] },
            ],
            [
              { header: false, content: [t('11')] },
              { header: false, content: [t('13')] },
            ],
          ],
        },
        {
          kind: 'figure',
          page: 1,
          image: { mime: 'image/png', base64: PNG_BASE64, width: 2, height: 2 },
          alt: 'A red square',
          caption: [t('Figure 1. The logo')],
          decorative: false,
          needsAlt: false,
        },
        { kind: 'figure', page: 1, image: { mime: 'image/png', base64: PNG_BASE64, width: 2, height: 2 }, decorative: true, needsAlt: false },
      ]),
      page(
        2,
        [
          { kind: 'heading', page: 2, level: 2, content: [t('Methods')] },
          {
            kind: 'formula',
            page: 2,
            text: 'E = mc^2',
            tex: 'E = mc^2',
            mathml: '<math><mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup></math>',
            display: true,
          },
          { kind: 'formula', page: 2, text: 'a + b = c', display: false },
          { kind: 'heading', page: 2, level: 3, content: [t('Details')] },
          { kind: 'blockquote', page: 2, children: [{ kind: 'paragraph', page: 2, content: [t('A quoted remark.')] }] },
          { kind: 'code', page: 2, text: 'const a = 1 < 2;' },
          { kind: 'paragraph', page: 2, content: [t('Arabic '), { kind: 'lang', lang: 'ar', children: [t('مرحبا بالعالم')] }, t(' and Chinese 你好世界.')] },
          { kind: 'heading', page: 2, level: 2, content: [t('Results')] },
          { kind: 'footnote', page: 2, id: 'n1', label: '1', content: [t('The footnote text.')] },
        ],
        { label: 'ii', classification: 'complex', reasons: ['formula'], backend: 'chunked-vision', costUsd: 0.0123, model: 'test-model', promptHash: 'abc' },
      ),
    ],
  };
}
