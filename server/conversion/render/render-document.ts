import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ConversionOutputs } from '../engine.ts';
import type { ConvertedDocument } from '../model.ts';
import { openDocumentRender, type RenderOptions } from './stream.ts';

/**
 * HTML, tagged PDF, audit and report of a whole document held in memory: the
 * streaming renderer into a scratch folder, read back. Long documents should
 * use openDocumentRender directly and keep the files.
 */
export async function renderDocument(document: ConvertedDocument, options: RenderOptions = {}): Promise<ConversionOutputs> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'folio-render-'));
  try {
    const render = openDocumentRender(document.meta, { dir, baseName: 'document' }, options);
    for (const page of [...document.pages].sort((a, b) => a.page - b.page)) await render.add(page);
    const files = await render.finish();
    const [html, taggedPdf, reportHtml] = await Promise.all([readFile(files.html, 'utf8'), readFile(files.taggedPdf!), readFile(files.reportHtml, 'utf8')]);
    return { html, taggedPdf, report: files.report, reportHtml };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
