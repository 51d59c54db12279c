import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { ConversionOutputs, OutputFiles } from '../engine.ts';

/** A file name safe inside a zip on every platform: no path separators, no control characters. */
export function safeBaseName(baseName: string): string {
  const cleaned = baseName
    .replace(/\.pdf$/i, '')
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, '_')
    .replace(/^\.+/, '')
    .trim();
  return cleaned.length > 0 ? cleaned.slice(0, 200) : 'document';
}

/**
 * Streams the four outputs as a zip. The PDF is already compressed, so it is
 * stored rather than deflated again (saves CPU, costs almost no bytes).
 */
export function zipOutputs(outputs: ConversionOutputs, baseName: string): Readable {
  const base = safeBaseName(baseName);
  const zip = new yazl.ZipFile();
  const mtime = new Date();
  zip.addBuffer(Buffer.from(outputs.html, 'utf8'), `${base}.html`, { mtime });
  zip.addBuffer(outputs.taggedPdf, `${base}.accessible.pdf`, { mtime, compress: false });
  zip.addBuffer(Buffer.from(JSON.stringify(outputs.report, null, 2), 'utf8'), `${base}.report.json`, { mtime });
  zip.addBuffer(Buffer.from(outputs.reportHtml, 'utf8'), `${base}.report.html`, { mtime });
  zip.end();
  return zip.outputStream as Readable;
}

/** The same zip from rendered files on disk (openDocumentRender's output): read as the zip streams, never whole. */
export function zipFiles(files: OutputFiles, baseName: string): Readable {
  const base = safeBaseName(baseName);
  const zip = new yazl.ZipFile();
  zip.addFile(files.html, `${base}.html`);
  if (files.taggedPdf) zip.addFile(files.taggedPdf, `${base}.accessible.pdf`, { compress: false });
  zip.addFile(files.reportJson, `${base}.report.json`);
  zip.addFile(files.reportHtml, `${base}.report.html`);
  zip.end();
  return zip.outputStream as Readable;
}
