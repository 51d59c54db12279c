import zlib from 'node:zlib';

/**
 * The hostile probe set, generated (no large file is committed): PDFs built
 * to exhaust memory or time, each small on disk unless its size is the point.
 */

type PdfObject = { id: number; dict: string; stream?: Buffer };

/** A PDF from numbered objects (1 is the catalog), with a correct xref table. */
function buildPdf(objects: PdfObject[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets = new Map<number, number>();
  for (const object of objects) {
    offsets.set(object.id, offset);
    const body = object.stream
      ? Buffer.concat([
          Buffer.from(`${object.id} 0 obj\n<< ${object.dict} /Length ${object.stream.length} >>\nstream\n`, 'latin1'),
          object.stream,
          Buffer.from('\nendstream\nendobj\n', 'latin1'),
        ])
      : Buffer.from(`${object.id} 0 obj\n${object.dict}\nendobj\n`, 'latin1');
    parts.push(body);
    offset += body.length;
  }
  const size = Math.max(...objects.map((object) => object.id)) + 1;
  let xref = `xref\n0 ${size}\n0000000000 65535 f \n`;
  for (let id = 1; id < size; id++) {
    const at = offsets.get(id);
    xref += at === undefined ? '0000000000 65535 f \n' : `${String(at).padStart(10, '0')} 00000 n \n`;
  }
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

const CATALOG = { id: 1, dict: '<< /Type /Catalog /Pages 2 0 R >>' };
const PAGES = { id: 2, dict: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>' };

function onePage(content: Buffer, resources = '<< >>', extra: PdfObject[] = []): Buffer {
  return buildPdf([
    CATALOG,
    PAGES,
    { id: 3, dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources ${resources} /Contents 4 0 R >>` },
    { id: 4, dict: '', stream: content },
    ...extra,
  ]);
}

/**
 * A zlib stream of `bytes` zeros, built without ever holding them: one 1 MiB block deflated up to a sync
 * flush repeats (its back-references never reach before its own start, so each copy decodes alike), an
 * empty final block ends it, and the Adler-32 of n zeros is (n mod 65521) << 16 | 1.
 */
function deflatedZeros(bytes: number): Buffer {
  const unit = 1024 * 1024;
  const whole = Math.floor(bytes / unit);
  const block = zlib.deflateRawSync(Buffer.alloc(unit), { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const rest = zlib.deflateRawSync(Buffer.alloc(bytes - whole * unit), { level: 9 });
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((bytes % 65521) << 16) | 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array.from({ length: whole }, () => block), rest, adler]);
}

/** One page drawing one side×side RGB image of zeros: about 1 MB on disk at 20000², 1.2 GB decoded. */
export function imageBomb(side: number): Buffer {
  const pixels = deflatedZeros(side * side * 3);
  return onePage(
    Buffer.from('q 500 0 0 500 50 150 cm /Im0 Do Q\nBT /F1 12 Tf 72 72 Td (A page with a huge image) Tj ET', 'latin1'),
    '<< /XObject << /Im0 5 0 R >> >>',
    [
      {
        id: 5,
        dict: `/Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode`,
        stream: pixels,
      },
    ],
  );
}

/**
 * One page drawing `count` different side×side RGB images of zeros, each under the per-image cap
 * (MAX_IMAGE_PIXELS), so only a bound on the page's whole footprint stops their sum.
 */
export function manyImages(count: number, side: number): Buffer {
  const pixels = deflatedZeros(side * side * 3);
  const names = Array.from({ length: count }, (_, n) => `/Im${n} ${5 + n} 0 R`).join(' ');
  const draws = Array.from({ length: count }, (_, n) => `q 50 0 0 50 ${50 + (n % 10) * 52} ${150 + Math.floor(n / 10) * 52} cm /Im${n} Do Q`).join('\n');
  return onePage(
    Buffer.from(`${draws}\nBT /F1 12 Tf 72 72 Td (A page of many large images) Tj ET`, 'latin1'),
    `<< /XObject << ${names} >> >>`,
    Array.from({ length: count }, (_, n) => ({
      id: 5 + n,
      dict: `/Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode`,
      stream: pixels,
    })),
  );
}

/**
 * A page of `side`×`side` points with two small drawn figures (filled curves) in opposite corners: a
 * render of the area both figures span is as large as the page.
 */
export function farApartFigures(side: number): Buffer {
  const blob = (x: number, y: number) =>
    `0.2 0.4 0.8 rg ${x} ${y} m ${x + 150} ${y + 300} ${x + 300} ${y + 300} ${x + 300} ${y} c ${x + 150} ${y - 100} ${x + 50} ${y - 50} ${x} ${y} c f`;
  const content = `${blob(side * 0.15, side * 0.15)}\n${blob(side * 0.8, side * 0.8)}\nBT /F1 12 Tf ${side / 2} ${side / 2} Td (Two figures far apart) Tj ET`;
  return buildPdf([
    CATALOG,
    PAGES,
    { id: 3, dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${side} ${side}] /Resources << >> /Contents 4 0 R >>` },
    { id: 4, dict: '', stream: Buffer.from(content, 'latin1') },
  ]);
}

/** One page whose content stream inflates to `megabytes` MB of zeros (NULs are whitespace in a content stream). */
export function flateBomb(megabytes: number): Buffer {
  return buildPdf([
    CATALOG,
    PAGES,
    { id: 3, dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R >>' },
    { id: 4, dict: '/Filter /FlateDecode', stream: deflatedZeros(megabytes * 1024 * 1024) },
  ]);
}

/** One page of `count` path operators (tiny lines), deflated. */
export function operatorFlood(count: number): Buffer {
  const line = Buffer.from('1 1 m 2 2 l S\n', 'latin1');
  const content = Buffer.alloc(line.length * Math.ceil(count / 3));
  for (let at = 0; at < content.length; at += line.length) line.copy(content, at);
  return buildPdf([
    CATALOG,
    PAGES,
    { id: 3, dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R >>' },
    { id: 4, dict: '/Filter /FlateDecode', stream: zlib.deflateSync(content) },
  ]);
}

/** `%PDF-1.4` and then `bytes` zeros: no objects, no xref, nothing to read. */
export function junkAfterHeader(bytes: number): Buffer {
  const out = Buffer.alloc(9 + bytes);
  out.write('%PDF-1.4\n', 'latin1');
  return out;
}

/** A page tree whose /Pages node lists itself as its own kid (and says it has one page). */
export function selfReferencingPageTree(): Buffer {
  return buildPdf([CATALOG, { id: 2, dict: '<< /Type /Pages /Kids [2 0 R] /Count 1 >>' }]);
}

/** Every probe by name, for the test and the bench. */
export function probeSet(): Array<{ name: string; bytes: () => Buffer }> {
  return [
    { name: 'image 20000²', bytes: () => imageBomb(20_000) },
    { name: 'image 12000²', bytes: () => imageBomb(12_000) },
    { name: '10 images of 7000² on one page', bytes: () => manyImages(10, 7_000) },
    { name: 'two figures far apart on a 14400-point page', bytes: () => farApartFigures(14_400) },
    { name: 'flate bomb 512 MB', bytes: () => flateBomb(512) },
    { name: '2 million operators', bytes: () => operatorFlood(2_000_000) },
    { name: 'junk after %PDF- (190 MB)', bytes: () => junkAfterHeader(190 * 1024 * 1024) },
    { name: 'self-referencing page tree', bytes: selfReferencingPageTree },
  ];
}
