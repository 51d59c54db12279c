import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { readAll } from '../../server/storage/storage.ts';

/** The bytes of a minimal DOCX whose word/document.xml body is `body` (paragraphs), plus any extra parts. */
export async function docxBytes(body: string, extra: Record<string, string | Buffer> = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(
    Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
    ),
    '[Content_Types].xml',
  );
  zip.addBuffer(
    Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    ),
    '_rels/.rels',
  );
  zip.addBuffer(
    Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
    ),
    'word/document.xml',
  );
  for (const [name, content] of Object.entries(extra)) zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  zip.end();
  return readAll(zip.outputStream as never);
}

/** `count` paragraphs, each followed by a hard page break but the last: a document of `count` pages. */
export function pagedBody(count: number): string {
  const page = (n: number) => `<w:p><w:r><w:t>Page ${n} of the report.</w:t></w:r></w:p>`;
  return Array.from({ length: count }, (_, i) => page(i + 1)).join('<w:p><w:r><w:br w:type="page"/></w:r></w:p>');
}

export async function writeTemp(name: string, bytes: Buffer): Promise<string> {
  const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'folio-hostile-')), name);
  await fs.writeFile(file, bytes);
  return file;
}
