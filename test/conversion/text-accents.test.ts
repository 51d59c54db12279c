import { describe, expect, it } from 'vitest';
import { layoutToTex } from '../../server/conversion/backends/local/math-layout.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { formulaToTex } from '../../server/conversion/backends/local/tex.ts';
import { readTextLayer } from '../../server/conversion/backends/local/text-layer.ts';
import { type Doc, drawPdf } from '../helpers/local-pages.ts';

/**
 * TeX without a precomposed letter draws its letter and the accent apart
 * (OT1's "´" and "e"; a math \hat over P): read as text, "Universit´e" and
 * "ˆ P". The text layer puts each accent on its letter where the page draws
 * it there, and nowhere else.
 */

async function lineText(draw: (doc: Doc) => void): Promise<string> {
  const doc = await openPdf(await drawPdf(draw));
  try {
    const items = await readTextLayer(await doc.getPage(1));
    return items.map((item) => item.text).join('');
  } finally {
    await doc.loadingTask.destroy();
  }
}

/** Text at an exact point (top-left origin), on one line. */
const at = (doc: Doc, text: string, x: number, y = 100) => doc.text(text, x, y, { lineBreak: false });

describe('accents drawn apart from their letters', () => {
  it('puts an accent drawn over the letter before it, or before the letter drawn back under it, on that letter', async () => {
    const after = await lineText((doc) => {
      doc.font('Times-Roman').fontSize(12);
      const stem = doc.widthOfString('Universit');
      at(doc, 'Universit', 100);
      at(doc, 'e', 100 + stem);
      // the accent drawn after its letter, centred on it, then the words after
      at(doc, '\u00b4 de Paris', 100 + stem + (doc.widthOfString('e') - doc.widthOfString('\u00b4')) / 2);
    });
    expect(after).toBe('Université de Paris');
    const before = await lineText((doc) => {
      doc.font('Times-Roman').fontSize(12);
      const stem = doc.widthOfString('Schr');
      // the accent closes a run and the letter is drawn back under it
      at(doc, 'Schr\u00a8', 100);
      at(doc, 'odinger', 100 + stem);
    });
    expect(before).toBe('Schrödinger');
  });

  it('puts a raised accent of its own on the letter under it (a math \\hat), and leaves one beside the letters alone', async () => {
    const hat = await lineText((doc) => {
      doc.font('Times-Roman').fontSize(12);
      at(doc, '\u02c6', 101, 97);
      at(doc, 'P = 0', 100);
    });
    expect(hat).toBe('P̂ = 0');
    // an accent typed as a character of its own, between letters, is drawn beside them: it stays
    const typed = await lineText((doc) => {
      doc.font('Times-Roman').fontSize(12);
      at(doc, 'don\u00b4t', 100);
    });
    expect(typed).toBe('don´t');
  });

  it('reads an accented letter as a TeX accent, from glyphs and from text', () => {
    const glyph = (text: string, x: number) => ({ text, x, y: 100, width: 6, size: 10, bold: false, italic: true });
    expect(layoutToTex([glyph('P̂', 0), glyph('=', 8), glyph('F̃', 16)])).toBe('\\hat{P}=\\tilde{F}');
    expect(formulaToTex('F̃(x) = γ̃(x)')).toBe('\\tilde{F}(x) = \\tilde{\\gamma}(x)');
    // a word of accented letters is a word, not accented variables; a letter run stops before a marked letter
    expect(formulaToTex('x = 0 für aF̃')).toBe('x = 0 \\text{für} a\\tilde{F}');
    // an accent math has no command for keeps its letter as text
    expect(formulaToTex('ş = 1')).toBe('\\text{ş} = 1');
  });
});
