import { describe, expect, it } from 'vitest';
import { auditHtml } from '../../server/conversion/audit/audit-html.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { renderDocument } from '../../server/conversion/render/render-document.ts';
import type { FolioReport } from '../../server/conversion/render/report.ts';
import type { ConvertedDocument } from '../../server/conversion/model.ts';
import { fullDocument, page, PNG_BASE64 } from './render-fixture.ts';

const t = (text: string) => ({ kind: 'text' as const, text });

describe('audit', () => {
  it('passes the rendered document of every block kind, with color-contrast disabled and said so', async () => {
    const outputs = await renderDocument(fullDocument());
    const report = outputs.report as FolioReport;
    expect(report.audit.violations).toEqual([]);
    expect(report.wcagStatus).toBe('passed');
    expect(report.audit.tags).toEqual(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']);
    expect(report.audit.disabledRules.map((d) => d.rule)).toEqual(['color-contrast']);
    expect(report.audit.engine).toMatch(/^axe-core 4\.\d+\.\d+ in jsdom$/);
    expect(report.audit.passedRules).toBeGreaterThan(10);
    // The report page itself is held to the same standard.
    expect((await auditHtml(outputs.reportHtml)).violations).toEqual([]);
  });

  it('fails hand-written HTML with an image without alt, a table without headers and an empty link, naming the rules', async () => {
    const html = `<!DOCTYPE html><html lang="en"><head><title>Bad</title></head><body><main><h1>Bad</h1>
<img src="data:image/png;base64,${PNG_BASE64}">
<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>
<p><a href="https://example.org/"></a></p></main></body></html>`;
    const audit = await auditHtml(html);
    expect(audit.wcagStatus).toBe('failed');
    const rules = audit.violations.map((v) => v.rule);
    expect(rules).toEqual(expect.arrayContaining(['image-alt', 'link-name', 'folio-image-alt', 'folio-empty-link', 'folio-table-headers']));
    const imageAlt = audit.violations.find((v) => v.rule === 'image-alt')!;
    expect(imageAlt).toMatchObject({ source: 'axe', count: 1, wcag: ['1.1.1'] });
    expect(audit.violationCount).toBe(audit.violations.reduce((s, v) => s + v.count, 0));
  });

  it('flags missing lang and title, and skipped heading levels', async () => {
    const audit = await auditHtml('<!DOCTYPE html><html><head></head><body><main><h2>x</h2><h4>y</h4></main></body></html>');
    const rules = audit.violations.map((v) => v.rule);
    expect(rules).toEqual(
      expect.arrayContaining(['html-has-lang', 'document-title', 'folio-html-lang', 'folio-document-title', 'folio-heading-order', 'folio-page-has-h1']),
    );
    expect(audit.violations.find((v) => v.rule === 'folio-heading-order')?.count).toBe(2);
  });

  it('audits documents given at once in turn, each as if alone: nothing of one is found in the next', async () => {
    const bad = `<!DOCTYPE html><html lang="en"><head><title>Bad</title></head><body><main><h1>Bad</h1>
<img src="data:image/png;base64,${PNG_BASE64}"><p><a href="https://example.org/"></a></p></main></body></html>`;
    const bare = '<!DOCTYPE html><html><head></head><body><main><h2>x</h2><h4>y</h4></main></body></html>';
    const good = '<!DOCTYPE html><html lang="fr"><head><title>Bon</title></head><body><main><h1>Bon</h1><p>Texte.</p></main></body></html>';
    const alone = [];
    for (const html of [bad, bare, good]) alone.push(await auditHtml(html));
    const together = await Promise.all([bad, bare, good, bad].map((html) => auditHtml(html)));
    const rules = (audit: { violations: { rule: string; count: number; targets: string[] }[] }) =>
      audit.violations.map(({ rule, count, targets }) => ({ rule, count, targets }));
    expect(together.map(rules)).toEqual([...alone, alone[0]!].map(rules));
    expect(together[2]!.wcagStatus).toBe('passed');
    expect(together[3]!.violations.map((v) => v.rule)).not.toContain('html-has-lang');
  });

  it('fails a converted document with an undescribed figure and a table without headers, and reports the warnings', async () => {
    const bad: ConvertedDocument = {
      meta: { title: 'Bad', lang: 'en', pageCount: 1, tagged: false, sourceName: 'bad.pdf' },
      pages: [
        page(
          1,
          [
            { kind: 'heading', page: 1, level: 1, content: [t('Bad')] },
            { kind: 'figure', page: 1, image: { mime: 'image/png', base64: PNG_BASE64, width: 2, height: 2 }, decorative: false, needsAlt: true },
            {
              kind: 'table',
              page: 1,
              rows: [
                [
                  { header: false, content: [t('a')] },
                  { header: false, content: [t('b')] },
                ],
              ],
              uncertain: true,
            },
          ],
          { ocr: true, classification: 'complex', reasons: ['ocr', 'table', 'figure'] },
        ),
      ],
    };
    const report = (await renderDocument(bad)).report as FolioReport;
    expect(report.wcagStatus).toBe('failed');
    expect(report.audit.violations.map((v) => v.rule)).toEqual(expect.arrayContaining(['image-alt', 'folio-image-alt', 'folio-table-headers']));
    expect(report.warnings.map((w) => w.kind).sort()).toEqual(['missing-alt', 'ocr', 'table-without-headers', 'uncertain-table']);
    expect(report.totals.figuresMissingAlt).toBe(1);
  });

  it('audits figure pictures without their bytes: same findings, one slice however big the pictures', async () => {
    const big = 'A'.repeat(300_000);
    const pages = [1, 2].map((n) =>
      page(n, [
        { kind: 'heading', page: n, level: n === 1 ? 1 : 2, content: [t(`Part ${n}`)] },
        {
          kind: 'figure',
          page: n,
          image: { mime: 'image/png', base64: big, width: 2, height: 2 },
          decorative: false,
          needsAlt: n === 2,
          ...(n === 1 ? { alt: 'A described picture' } : {}),
        },
      ]),
    );
    const rendered = renderHtml({ meta: { title: 'Pictures', lang: 'en', pageCount: 2, tagged: false, sourceName: 'p.pdf' }, pages });
    expect(rendered.html.length).toBeGreaterThan(600_000);
    const result = await auditHtml(rendered, { sliceChars: 400_000 });
    expect(result.slices).toBe(1);
    expect(result.violations.map((v) => `${v.rule}:${v.count}`).sort()).toEqual(['folio-image-alt:1', 'image-alt:1']);
    expect(result.violations.flatMap((v) => v.targets).join(' ')).not.toContain('AAAA');
  });

  it('audits a long document slice by slice with the same findings as in one piece', async () => {
    const pages = Array.from({ length: 12 }, (_, i) =>
      page(i + 1, [
        { kind: 'heading', page: i + 1, level: i === 0 ? 1 : 2, content: [t(`Part ${i + 1}`)] },
        { kind: 'paragraph', page: i + 1, content: [t('Some words. '.repeat(40))] },
        { kind: 'figure', page: i + 1, image: { mime: 'image/png', base64: PNG_BASE64, width: 2, height: 2 }, decorative: false, needsAlt: true },
      ]),
    );
    const rendered = renderHtml({ meta: { title: 'Long', lang: 'en', pageCount: 12, tagged: false, sourceName: 'long.pdf' }, pages });
    const whole = await auditHtml(rendered.html);
    const sliced = await auditHtml(rendered, { sliceChars: 2_000 });
    expect(whole.slices).toBe(1);
    expect(sliced.slices).toBeGreaterThan(5);
    const summary = (a: typeof whole) => a.violations.map((v) => `${v.rule}:${v.count}`).sort();
    expect(summary(sliced)).toEqual(summary(whole));
    expect(summary(whole)).toEqual(['folio-image-alt:12', 'image-alt:12']);
    // A heading level skipped across a slice boundary is still found, and page-wide rules count once.
    const skipping = renderHtml({
      meta: { title: 'Skip', lang: 'en', pageCount: 12, tagged: false, sourceName: 's.pdf' },
      pages: pages.map((p) => ({ ...p, blocks: p.blocks.filter((b) => b.kind === 'paragraph') })),
    });
    const head = skipping.shell.before
      .replace('<h1 id="doc-title">', '<h2 id="doc-title">')
      .replace('</h1>\n</header>', '</h2>\n</header>')
      .replace(/<html lang="en">/, '<html>');
    const partsWithH4 = [...skipping.mainParts];
    partsWithH4[partsWithH4.length - 1] = '<h4>Late</h4>';
    const broken = { html: head + partsWithH4.join('\n') + skipping.shell.after, shell: { before: head, after: skipping.shell.after }, mainParts: partsWithH4 };
    const a = await auditHtml(broken, { sliceChars: 2_000 });
    expect(a.slices).toBeGreaterThan(3);
    const counts = Object.fromEntries(a.violations.map((v) => [v.rule, v.count]));
    expect(counts).toMatchObject({ 'html-has-lang': 1, 'folio-html-lang': 1, 'folio-page-has-h1': 1 });
    // h2 as the first heading, then h4 after h2 in the last slice.
    expect(counts['folio-heading-order']).toBe(2);
  });
});
