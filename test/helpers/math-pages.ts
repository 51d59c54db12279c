import path from 'node:path';
import type { Doc } from './local-pages.ts';

/**
 * A small TeX-like typesetter for test pages: formulas drawn with KaTeX's
 * own fonts at the positions TeX's display rules give (numerators and
 * denominators stacked over a drawn fraction bar, limits over and under a
 * big operator, raised and lowered scripts, a radical's overbar), so the
 * engine meets what LaTeX and KaTeX put on a page. Every glyph drawn is
 * recorded, for comparing what a TeX renderer draws from our TeX with the page.
 */

const FONTS = path.join(import.meta.dirname, '../../node_modules/katex/dist/fonts');
const FILES = {
  main: 'KaTeX_Main-Regular',
  math: 'KaTeX_Math-Italic',
  bold: 'KaTeX_Main-Bold',
  size2: 'KaTeX_Size2-Regular',
} as const;
export type Face = keyof typeof FILES;

/** A glyph as drawn: its text, its baseline's left end (pdfkit space: y down) and its size. */
export type DrawnGlyph = { text: string; x: number; y: number; size: number };

/** A laid-out piece of a formula, measured from its baseline at the size it was made for. */
export type MathBox = { width: number; height: number; depth: number; draw(doc: Doc, x: number, baseline: number, out: DrawnGlyph[]): void };

/** The em-based measures TeX uses (Computer Modern's font parameters, as KaTeX has them). */
const AXIS = 0.25;
const RULE = 0.04;
const SCRIPT = 0.7;

export class MathSetter {
  private readonly doc: Doc;
  constructor(doc: Doc) {
    this.doc = doc;
  }

  /** Glyphs in one face: letters of the math italic, digits and operators upright, bold for vectors. */
  text(text: string, face: Face, size: number): MathBox {
    const file = path.join(FONTS, `${FILES[face]}.ttf`);
    const width = this.doc.font(file).fontSize(size).widthOfString(text);
    const big = face === 'size2';
    return {
      width,
      height: size * (big ? 0.95 : 0.7),
      depth: size * (big ? 0.45 : 0.2),
      draw: (doc, x, baseline, out) => {
        doc.font(file).fontSize(size).text(text, x, baseline, { baseline: 'alphabetic', lineBreak: false });
        out.push({ text, x, y: baseline, size });
      },
    };
  }

  /** A row: pieces side by side, `gap` em of the size apart where a piece asks for it (a relation's spacing). */
  row(...pieces: (MathBox | number)[]): MathBox {
    const boxes: { box: MathBox; at: number }[] = [];
    let width = 0;
    for (const piece of pieces) {
      if (typeof piece === 'number') width += piece;
      else {
        boxes.push({ box: piece, at: width });
        width += piece.width;
      }
    }
    return {
      width,
      height: Math.max(0, ...boxes.map(({ box }) => box.height)),
      depth: Math.max(0, ...boxes.map(({ box }) => box.depth)),
      draw: (doc, x, baseline, out) => {
        for (const { box, at } of boxes) box.draw(doc, x + at, baseline, out);
      },
    };
  }

  /** A fraction: numerator and denominator centred over and under a bar on the math axis. */
  frac(top: MathBox, bottom: MathBox, size: number, display: boolean): MathBox {
    const thick = RULE * size;
    const axis = AXIS * size;
    const clear = (display ? 3 : 1) * thick;
    const up = Math.max((display ? 0.677 : 0.394) * size, axis + thick / 2 + clear + top.depth);
    const down = Math.max((display ? 0.686 : 0.345) * size, thick / 2 + clear + bottom.height - axis);
    const pad = 0.12 * size;
    const width = Math.max(top.width, bottom.width) + pad * 2;
    return {
      width,
      height: up + top.height,
      depth: down + bottom.depth,
      draw: (doc, x, baseline, out) => {
        top.draw(doc, x + (width - top.width) / 2, baseline - up, out);
        bottom.draw(doc, x + (width - bottom.width) / 2, baseline + down, out);
        doc.rect(x + pad / 2, baseline - axis - thick / 2, width - pad, thick).fill('black');
      },
    };
  }

  /** Scripts raised and lowered beside a base, at the script size the caller made them in. */
  scripts(base: MathBox, size: number, sup?: MathBox, sub?: MathBox): MathBox {
    const up = 0.413 * size;
    const down = (sup ? 0.247 : 0.15) * size;
    const width = base.width + Math.max(sup?.width ?? 0, sub?.width ?? 0) + 0.05 * size;
    return {
      width,
      height: Math.max(base.height, sup ? up + sup.height : 0),
      depth: Math.max(base.depth, sub ? down + sub.depth : 0),
      draw: (doc, x, baseline, out) => {
        base.draw(doc, x, baseline, out);
        sup?.draw(doc, x + base.width + 0.05 * size, baseline - up, out);
        sub?.draw(doc, x + base.width, baseline + down, out);
      },
    };
  }

  /** A big operator with its limits centred over and under it (display style). */
  limits(operator: MathBox, size: number, over?: MathBox, under?: MathBox): MathBox {
    const width = Math.max(operator.width, over?.width ?? 0, under?.width ?? 0);
    const overAt = over ? operator.height + 0.111 * size + over.depth : 0;
    const underAt = under ? operator.depth + 0.167 * size + under.height : 0;
    return {
      width,
      height: over ? overAt + over.height : operator.height,
      depth: under ? underAt + under.depth : operator.depth,
      draw: (doc, x, baseline, out) => {
        operator.draw(doc, x + (width - operator.width) / 2, baseline, out);
        over?.draw(doc, x + (width - over.width) / 2, baseline - overAt, out);
        under?.draw(doc, x + (width - under.width) / 2, baseline + underAt, out);
      },
    };
  }

  /** A square root: the radical glyph, and a bar over what it takes. */
  sqrt(body: MathBox, size: number): MathBox {
    const sign = this.text('√', 'main', size);
    const thick = RULE * size;
    const top = Math.max(body.height + thick * 3, sign.height);
    return {
      width: sign.width + body.width + 0.05 * size,
      height: top + thick,
      depth: Math.max(body.depth, sign.depth),
      draw: (doc, x, baseline, out) => {
        sign.draw(doc, x, baseline, out);
        body.draw(doc, x + sign.width, baseline, out);
        doc.rect(x + sign.width - thick, baseline - top, body.width + thick + 0.05 * size, thick).fill('black');
      },
    };
  }
}

/** Draws a formula centred on a line, with its glyphs recorded; returns where its lowest ink ends (y down). */
export function drawDisplay(doc: Doc, box: MathBox, centre: number, baseline: number, out: DrawnGlyph[]): number {
  box.draw(doc, centre - box.width / 2, baseline, out);
  return baseline + box.depth;
}

export { SCRIPT as SCRIPT_SIZE };

/**
 * The pieces a test page is set with at one body size: prose lines in Times, math italic and upright
 * glyphs, and TeX's spacing (a thick space around relations, a medium one around binary operators).
 */
export function mathKit(doc: Doc, size: number) {
  const m = new MathSetter(doc);
  const n = (text: string, at = size) => m.text(text, 'main', at);
  return {
    m,
    prose: (text: string, y: number) => doc.font('Times-Roman').fontSize(size).text(text, 72, y, { baseline: 'alphabetic', lineBreak: false }),
    rel: (text: string) => m.row(0.28 * size, n(text), 0.28 * size),
    bin: (text: string) => m.row(0.22 * size, n(text), 0.22 * size),
    v: (text: string, at = size) => m.text(text, 'math', at),
    n,
  };
}

/**
 * A page as pdfTeX sets "a ∉ B": the negation slash a glyph of no advance
 * (it extracts as "6") drawn in the same font as the ∈ it strikes, so the
 * text layer has them in one run. A Type 3 font, written out by hand, is the
 * way to a glyph of zero width; prose above and below sets the line off.
 */
export function negationPdf(): Uint8Array {
  const cmap =
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Neg def 1 begincodespacerange <00> <FF> endcodespacerange ' +
    '4 beginbfchar <36> <0036> <42> <0042> <61> <0061> <65> <2208> endbfchar endcmap CMapName currentdict /CMap defineresource pop end end';
  const widths = Array.from({ length: 101 - 54 + 1 }, (_, index) => ([66, 97, 101].includes(54 + index) ? 600 : 0)).join(' ');
  const box = '600 0 d0 50 0 500 700 re f';
  const slash = '0 0 d0 0 -200 m 400 800 l S';
  const content = [
    'BT /F2 11 Tf 72 250 Td (The set of all points of the plane that lie outside the disc is open.) Tj ET',
    'BT /F1 11 Tf 180 200 Td (a) Tj 12 0 Td (6e) Tj 12 0 Td (B) Tj ET',
    'BT /F2 11 Tf 72 150 Td (so no point of the boundary belongs to it, as the figure shows below.) Tj ET',
  ].join('\n');
  const stream = (text: string) => `<< /Length ${text.length} >>\nstream\n${text}\nendstream`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 500 300] /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>',
    `<< /Type /Font /Subtype /Type3 /FontBBox [0 -200 1000 800] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /six 8 0 R /B 9 0 R /a 9 0 R /elem 9 0 R >> /Encoding << /Type /Encoding /Differences [54 /six 66 /B 97 /a 101 /elem] >> /FirstChar 54 /LastChar 101 /Widths [${widths}] /ToUnicode 7 0 R /Resources << >> >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    stream(content),
    stream(cmap),
    stream(slash),
    stream(box),
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(pdf.length);
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(pdf);
}
