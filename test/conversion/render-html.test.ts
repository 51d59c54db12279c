import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../server/conversion/render/html.ts';
import type { Block, ConvertedDocument } from '../../server/conversion/model.ts';
import { fullDocument, page, PNG_BASE64 } from './render-fixture.ts';

/** One untagged page of the given blocks, rendered. */
const renderFormulaPage = (blocks: Block[]) =>
  renderHtml({ meta: { title: 'F', lang: 'en', pageCount: 1, tagged: false, sourceName: 'f.pdf' }, pages: [page(1, blocks)] });

function dom(html: string): Document {
  return new JSDOM(html).window.document;
}

const t = (text: string) => ({ kind: 'text' as const, text });

describe('HTML renderer', () => {
  const rendered = renderHtml(fullDocument());
  const doc = dom(rendered.html);

  it('has lang, title, charset, viewport, landmarks and a skip link to main', () => {
    expect(doc.documentElement.getAttribute('lang')).toBe('en-GB');
    expect(doc.title).toBe('Annual <Report> & "Review"');
    expect(rendered.html).toContain('<title>Annual &lt;Report&gt; &amp; &quot;Review&quot;</title>');
    expect(doc.querySelector('meta[charset]')?.getAttribute('charset')).toBe('utf-8');
    expect(doc.querySelector('meta[name="viewport"]')?.getAttribute('content')).toContain('width=device-width');
    expect(doc.querySelectorAll('header, main, footer')).toHaveLength(3);
    const skip = doc.body.firstElementChild!;
    expect(skip.tagName).toBe('A');
    expect(skip.getAttribute('href')).toBe('#main');
    expect(doc.getElementById('main')?.tagName).toBe('MAIN');
  });

  it('repairs heading levels and lists them in a table of contents', () => {
    const levels = Array.from(doc.querySelectorAll('h1, h2, h3, h4, h5, h6')).map((h) => `${h.tagName}:${h.textContent}`);
    // The source's h1 → h3 jump becomes h1 → h2.
    expect(levels).toEqual(['H1:Annual report', 'H2:Highlights', 'H2:Methods', 'H3:Details', 'H2:Results']);
    const toc = doc.querySelector('nav[aria-label="Table of contents"]')!;
    expect(toc).not.toBeNull();
    const targets = Array.from(toc.querySelectorAll('a')).map((a) => a.getAttribute('href')!);
    expect(targets).toHaveLength(5);
    for (const href of targets) expect(doc.getElementById(href.slice(1))?.tagName).toMatch(/^H[1-6]$/);
    // Nested: Details sits in a list inside Methods' item.
    expect(toc.querySelector('li li li a')?.textContent).toBe('Details');
  });

  it('uses the title as h1 when the document starts below level 1, and never jumps a level', () => {
    const { html } = renderHtml({
      meta: { title: 'Deep', lang: 'en', pageCount: 1, tagged: false, sourceName: 'd.pdf' },
      pages: [
        page(1, [
          { kind: 'heading', page: 1, level: 4, content: [t('A')] },
          { kind: 'heading', page: 1, level: 6, content: [t('B')] },
          { kind: 'heading', page: 1, level: 1, content: [t('C')] },
        ]),
      ],
    });
    const d = dom(html);
    expect(Array.from(d.querySelectorAll('h1,h2,h3,h4,h5,h6')).map((h) => `${h.tagName}:${h.textContent}`)).toEqual(['H1:Deep', 'H2:A', 'H3:B', 'H2:C']);
    // Three headings on one page: short, no TOC.
    expect(d.querySelector('nav')).toBeNull();
  });

  it('marks pages with their labels', () => {
    const markers = Array.from(doc.querySelectorAll('[role="doc-pagebreak"]'));
    expect(markers.map((m) => [m.id, m.getAttribute('title')])).toEqual([
      ['page-1', 'Page 1'],
      ['page-ii', 'Page ii'],
    ]);
  });

  it('renders nested lists with their start number', () => {
    const ol = doc.querySelector('main > ol')!;
    expect(ol.getAttribute('start')).toBe('3');
    expect(ol.querySelectorAll(':scope > li')).toHaveLength(2);
    expect(ol.querySelector('li > ul > li')?.textContent).toBe('Nested bullet');
  });

  it('renders tables with caption, th scope and spans in a scrollable region', () => {
    const table = doc.querySelector('table')!;
    expect(table.querySelector('caption')?.textContent).toBe('Revenue by region');
    expect(Array.from(table.querySelectorAll('thead th')).map((th) => th.getAttribute('scope'))).toEqual(['col', 'colgroup']);
    expect(table.querySelector('thead th[colspan="2"]')?.textContent).toBe('Revenue');
    const rowHeader = table.querySelector('tbody th')!;
    expect(rowHeader.getAttribute('scope')).toBe('rowgroup');
    expect(rowHeader.getAttribute('rowspan')).toBe('2');
    expect(table.parentElement?.getAttribute('tabindex')).toBe('0');
  });

  it('names a table the page gives no caption for screen readers only, with no visible caption the document lacks', () => {
    const cell = (text: string, header = false) => ({ header, content: [t(text)] });
    const html = renderFormulaPage([
      {
        kind: 'table',
        page: 1,
        rows: [
          [cell('Name', true), cell('Value', true)],
          [cell('This'), cell('11')],
        ],
      },
    ]).html;
    const table = dom(html).querySelector('table')!;
    expect(table.querySelector('caption')).toBeNull();
    expect(table.getAttribute('aria-label')).toBe('Table 1');
    expect(table.parentElement?.getAttribute('aria-label')).toBe('Table 1');
    expect(dom(html).querySelector('main')!.textContent).not.toContain('Table 1');
  });

  it('renders figures with alt, decorative images as presentation', () => {
    const figure = doc.querySelector('figure')!;
    const img = figure.querySelector('img')!;
    expect(img.getAttribute('alt')).toBe('A red square');
    expect(img.getAttribute('src')).toBe(`data:image/png;base64,${PNG_BASE64}`);
    expect(figure.querySelector('figcaption')?.textContent).toBe('Figure 1. The logo');
    const decorative = doc.querySelector('img.decorative')!;
    expect(decorative.getAttribute('alt')).toBe('');
    expect(decorative.getAttribute('role')).toBe('presentation');
  });

  it('renders formulas as MathML with a TeX annotation, or as labelled text', () => {
    const math = doc.querySelector('math')!;
    expect(math.getAttribute('display')).toBe('block');
    expect(math.querySelector('annotation')?.getAttribute('encoding')).toBe('application/x-tex');
    expect(math.querySelector('annotation')?.textContent).toBe('E = mc^2');
    const text = doc.querySelector('[role="math"]')!;
    expect(text.getAttribute('aria-label')).toBe('a + b = c');
  });

  it('links footnotes both ways', () => {
    const ref = doc.querySelector('a[role="doc-noteref"]')!;
    expect(ref.getAttribute('href')).toBe('#fn-n1');
    const note = doc.getElementById('fn-n1')!;
    expect(note.getAttribute('role')).toBe('doc-footnote');
    const back = note.querySelector('a[role="doc-backlink"]')!;
    expect(back.getAttribute('href')).toBe(`#${ref.id}`);
  });

  it('marks language changes, keeps code, escapes text and drops unsafe links', () => {
    expect(doc.querySelector('span[lang="fr"]')?.textContent).toBe('à bientôt');
    expect(doc.querySelector('span[lang="ar"]')?.getAttribute('dir')).toBe('rtl');
    expect(doc.querySelector('p code')?.textContent).toBe('x < y');
    expect(doc.querySelector('pre code')?.textContent).toBe('const a = 1 < 2;');
    expect(doc.querySelector('blockquote p')?.textContent).toBe('A quoted remark.');
    expect(doc.querySelectorAll('script')).toHaveLength(0);
    expect(doc.body.textContent).toContain('<script>alert(1)</script>');
    expect(Array.from(doc.querySelectorAll('a')).some((a) => a.getAttribute('href')?.startsWith('javascript'))).toBe(false);
    expect(doc.body.textContent).toContain('unsafe');
  });

  it('inlines a responsive stylesheet that respects dark mode', () => {
    const css = doc.querySelector('style')!.textContent!;
    expect(css).toContain('prefers-color-scheme: dark');
    expect(css).toContain('max-width: 46rem');
    expect(css).toContain('overflow-x: auto');
    expect(css).toContain(':focus-visible');
    expect(css).not.toMatch(/\d+px/);
  });

  it('takes a label-like first row as column headers when a table has none, and says so', () => {
    const rows = (first: string[]) => [first, ['1', '2'], ['3', '4']].map((r) => r.map((text) => ({ header: false, content: [t(text)] })));
    const out = renderHtml({
      meta: { title: 'T', lang: 'en', pageCount: 1, tagged: true, sourceName: 't.pdf' },
      pages: [
        page(1, [
          { kind: 'table', page: 1, rows: rows(['Column 1', 'Column 2']) },
          { kind: 'table', page: 1, rows: rows(['2019', '2020']) },
        ]),
      ],
    });
    const [labelled, numeric] = Array.from(dom(out.html).querySelectorAll('table'));
    expect(Array.from(labelled!.querySelectorAll('thead th')).map((th) => `${th.getAttribute('scope')}:${th.textContent}`)).toEqual([
      'col:Column 1',
      'col:Column 2',
    ]);
    expect(numeric!.querySelector('th')).toBeNull();
    expect(out.warnings.map((w) => w.kind)).toEqual(['inferred-table-headers', 'table-without-headers']);
  });

  it('lays out the TeX of a formula without MathML as MathML (KaTeX), keeping the TeX as its annotation and the text as alttext', () => {
    const out = renderFormulaPage([{ kind: 'formula', page: 1, text: 'a² + b² = c²', tex: 'a^{2} + b^{2} = c^{2}', display: true }]);
    const math = dom(out.html).querySelector('.formula math')!;
    expect([...math.querySelectorAll('msup')].map((sup) => sup.textContent)).toEqual(['a2', 'b2', 'c2']);
    expect(math.querySelector('annotation[encoding="application/x-tex"]')?.textContent).toBe('a^{2} + b^{2} = c^{2}');
    expect(math.getAttribute('display')).toBe('block');
    expect(math.getAttribute('alttext')).toBe('a² + b² = c²');
  });

  it('sets the mathematics of a paragraph inline in it, as MathML with its TeX, and its text where KaTeX cannot read the TeX', () => {
    const out = renderFormulaPage([
      {
        kind: 'paragraph',
        page: 1,
        content: [
          t('Let '),
          { kind: 'math', tex: '\\Omega\\subset\\mathbb{R}^{n}', text: 'Ω ⊂ Rn' },
          t(' be open and '),
          { kind: 'math', tex: '\\frac{', text: 'x/' },
          t(' so.'),
        ],
      },
    ]);
    const paragraph = dom(out.html).querySelector('main p')!;
    const math = paragraph.querySelector('math')!;
    expect(math.getAttribute('display')).toBeNull();
    expect(math.getAttribute('alttext')).toBe('Ω ⊂ Rn');
    expect(math.querySelector('msup')?.textContent).toBe('Rn');
    expect(math.querySelector('annotation[encoding="application/x-tex"]')?.textContent).toBe('\\Omega\\subset\\mathbb{R}^{n}');
    expect(paragraph.querySelectorAll('math')).toHaveLength(1);
    expect(paragraph.textContent).toContain(' be open and x/ so.');
  });

  it('keeps a formula whose TeX KaTeX cannot read as text, with the TeX as its annotation', () => {
    const out = renderFormulaPage([{ kind: 'formula', page: 1, text: 'x = y', tex: 'x = \\undefinedmacro{y', display: true }]);
    const math = dom(out.html).querySelector('.formula math')!;
    expect(math.querySelector('mtext')?.textContent).toBe('x = y');
    expect(math.querySelector('annotation[encoding="application/x-tex"]')?.textContent).toBe('x = \\undefinedmacro{y');
  });

  it('renders the block content of a cell (a list of links, a figure) inside the cell', () => {
    const out = renderHtml({
      meta: { title: 'Infobox', lang: 'en', pageCount: 1, tagged: true, sourceName: 'i.pdf' },
      pages: [
        page(1, [
          {
            kind: 'table',
            page: 1,
            rows: [
              [
                { header: true, scope: 'row', content: [t('Repository')] },
                {
                  header: false,
                  content: [t('github.com/mozilla/pdf.js')],
                  blocks: [
                    { kind: 'figure', page: 1, alt: 'Logo', decorative: false, needsAlt: false },
                    {
                      kind: 'list',
                      page: 1,
                      ordered: false,
                      items: [{ content: [{ kind: 'link', href: 'https://github.com/mozilla/pdf.js', children: [t('github.com/mozilla/pdf.js')] }] }],
                    },
                  ],
                },
              ],
            ],
          },
        ]),
      ],
    });
    const cell = dom(out.html).querySelector('table td')!;
    expect(cell.querySelector('ul li a')?.getAttribute('href')).toBe('https://github.com/mozilla/pdf.js');
    expect(cell.querySelector('figure [role="img"]')?.getAttribute('aria-label')).toBe('Logo');
  });

  it('keeps only MathML from a backend, and repairs links with no text or no target', () => {
    const out = renderHtml({
      meta: { title: 'M', lang: 'en', pageCount: 1, tagged: false, sourceName: 'm.pdf' },
      pages: [
        page(1, [
          {
            kind: 'formula',
            page: 1,
            text: 'x squared',
            tex: 'x^2',
            display: true,
            mathml: '<math onclick="evil()"><semantics><msup><mi>x</mi><mn>2</mn></msup></semantics><script>alert(1)</script><mtext><b>bold</b></mtext></math>',
          },
          { kind: 'formula', page: 1, text: 'y', mathml: '<div>not math</div>', display: false },
          { kind: 'figure', page: 1, alt: 'A chart of sales', decorative: false, needsAlt: false },
          {
            kind: 'paragraph',
            page: 1,
            content: [
              { kind: 'link', href: 'https://a.example/', children: [] },
              { kind: 'footnoteRef', id: 'zz', label: '9' },
            ],
          },
        ]),
      ],
    });
    expect(out.html).not.toMatch(/onclick|<script|alert|<b>/);
    const d = dom(out.html);
    const math = d.querySelector('math')!;
    expect(math.getAttribute('alttext')).toBe('x squared');
    // The TeX annotation goes inside the existing <semantics>, after the presentation.
    expect(Array.from(math.querySelector('semantics')!.children).map((c) => c.tagName.toLowerCase())).toEqual(['msup', 'annotation']);
    expect(d.querySelectorAll('math')).toHaveLength(1);
    expect(d.querySelector('[role="math"]')?.getAttribute('aria-label')).toBe('y');
    expect(d.querySelector('figure [role="img"]')?.getAttribute('aria-label')).toBe('A chart of sales');
    expect(d.querySelector('a[href="https://a.example/"]')?.textContent).toBe('https://a.example/');
    // A footnote reference whose note never came keeps its label but is not a dead link.
    expect(d.querySelector('a[href="#fn-zz"]')).toBeNull();
    expect(d.querySelector('main p sup')?.textContent).toBe('9');
  });

  it('shows a visible note and a warning for a figure nobody described', () => {
    const bad: ConvertedDocument = {
      meta: { title: '', lang: 'xx_bad lang', pageCount: 1, tagged: false, sourceName: 'scan.pdf' },
      pages: [page(1, [{ kind: 'figure', page: 1, image: { mime: 'image/png', base64: PNG_BASE64, width: 2, height: 2 }, decorative: false, needsAlt: true }])],
    };
    const out = renderHtml(bad);
    const d = dom(out.html);
    expect(d.title).toBe('scan');
    expect(d.documentElement.getAttribute('lang')).toBe('en');
    expect(d.querySelector('.needs-alt')?.textContent).toContain('Missing image description');
    expect(d.querySelector('img')?.hasAttribute('alt')).toBe(false);
    expect(out.warnings).toEqual([expect.objectContaining({ kind: 'missing-alt', page: 1 })]);
  });

  it("writes a math face's letters as the letters they are, a variable's in <var>, its digits as digits", () => {
    const html = renderFormulaPage([{ kind: 'paragraph', page: 1, content: [t('If 𝑛 > 𝟐 and 𝐱 ≠ 0, then 𝛼 holds.')] }]).html;
    const paragraph = dom(html).querySelector('main p')!;
    expect(paragraph.textContent).toBe('If n > 2 and x ≠ 0, then α holds.');
    expect(Array.from(paragraph.querySelectorAll('var')).map((element) => element.textContent)).toEqual(['n', 'x', 'α']);
  });
});
