import type { TextItem } from 'pdfjs-dist/types/src/display/api.js';
import { openPdf } from '../conversion/backends/local/pdf.ts';
import { escapeHtml } from '../sharing/html.ts';

/**
 * The local engine's layout-preserving rendering of a short document (a
 * flyer): every page a box of its own size in points, every text run placed
 * where the PDF draws it, in the order the PDF draws it (which is also the
 * order a screen reader reads). It keeps the look and gives up the reflow;
 * the comped reflow is the way back to a reflowed, structured document.
 */
export async function renderPositionedHtml(pdf: Uint8Array, options: { title: string; lang?: string }): Promise<{ html: string; pages: number }> {
  const doc = await openPdf(pdf);
  try {
    const sections: string[] = [];
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await doc.getPage(number);
      const viewport = page.getViewport({ scale: 1 });
      const content = await page.getTextContent();
      const runs = content.items
        .filter((item): item is TextItem => 'str' in item && item.str.trim().length > 0)
        .map((item) => {
          const [a, b, , , e, f] = item.transform as number[];
          const size = Math.max(1, Math.hypot(a ?? 0, b ?? 0));
          // PDF y grows upwards from the baseline; CSS top grows downwards from the box's top edge.
          const left = (e ?? 0) - (viewport.viewBox[0] ?? 0);
          const top = viewport.height - ((f ?? 0) - (viewport.viewBox[1] ?? 0)) - size;
          return `<span style="left:${left.toFixed(1)}pt;top:${top.toFixed(1)}pt;font-size:${size.toFixed(1)}pt">${escapeHtml(item.str)}</span>`;
        });
      page.cleanup();
      sections.push(
        `<section class="page" aria-label="Page ${number}" style="width:${viewport.width.toFixed(1)}pt;height:${viewport.height.toFixed(1)}pt">${runs.join('')}</section>`,
      );
    }
    const html = `<!doctype html>
<html lang="${escapeHtml(options.lang ?? 'en')}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(options.title)}</title>
<style>body{margin:0;padding:1rem;background:#eee;font-family:system-ui,sans-serif}.page{position:relative;margin:0 auto 1rem;background:#fff;color:#111;overflow:hidden}.page span{position:absolute;white-space:pre;line-height:1}</style></head>
<body><main><h1 class="visually-hidden" style="position:absolute;left:-10000px">${escapeHtml(options.title)}</h1>${sections.join('\n')}</main></body></html>`;
    return { html, pages: doc.numPages };
  } finally {
    await doc.loadingTask.destroy();
  }
}
