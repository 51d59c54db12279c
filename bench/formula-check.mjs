// Formulas of the local engine against their page: over the corpus PDFs, every formula block given TeX, and how many
// of those draw the very symbols the page's text of the formula has (as a multiset, spaces and order aside). A TeX
// that lost a glyph, doubled one or took a neighbour's is counted as not the same. KaTeX draws the TeX, so what is
// compared is what a reader is shown, not how the TeX is spelled.
// Run with Node 24 from the checkout's root: node bench/formula-check.mjs [--list] [files...]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import katex from 'katex';
import { convertLocalPage } from '../server/conversion/backends/local/convert-page.ts';
import { inspectDocument } from '../server/conversion/backends/local/document-meta.ts';
import { openPdf } from '../server/conversion/backends/local/pdf.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../shared/corpus');
const args = process.argv.slice(2);
const list = args.includes('--list');
const named = args.filter((arg) => !arg.startsWith('--'));
const files =
  named.length > 0
    ? named
    : [CORPUS, path.join(CORPUS, 'layout')].flatMap((dir) =>
        readdirSync(dir)
          .filter((name) => name.endsWith('.pdf'))
          .map((name) => path.join(dir, name)),
      );

// one spelling per symbol: the page and KaTeX draw some symbols with different code points
const SAME = {
  '⟶': '→',
  '⟹': '⇒',
  '−': '-',
  '–': '-',
  '·': '⋅',
  ϵ: 'ε',
  '∶': ':',
  '′': "'",
  '″': "''",
  '∣': '|',
  '〈': '⟨',
  '〉': '⟩',
  '∥': '‖',
  '◦': '∘',
  '⋯': '⋅⋅⋅',
  '…': '...',
};
// an accent is read as its letter on both sides: the page's combining mark, KaTeX's accent over its base
const normalise = (text) =>
  [
    ...text
      // a horizontal brace is drawn from tips on the page, as one stretched brace by KaTeX: neither is a symbol of the
      // formula (taken out first: NFKC makes the tips' presentation forms braces)
      .replace(/[︷︸⏞⏟]/g, '')
      .normalize('NFD')
      .replace(/(\p{L})\p{M}+/gu, '$1')
      .normalize('NFKC'),
  ]
    .map((char) => SAME[char] ?? char)
    .join('')
    .replace(/\s|[\u200b\u2061-\u2064]/g, '')
    // a long arrow is drawn as shaft pieces and a head on the page, as one stretched arrow by KaTeX
    .replace(/-+→/g, '→')
    .replace(/=+⇒/g, '⇒');
// pdfTeX strikes a relation with a zero-width slash and starts ↦ with a zero-width bar, which extract as "6" and "7":
// on the page a reader sees ≠, ∉ and ↦ (a TeX that keeps the digit is shown wrong, and counted so)
const pageSymbols = (text) => normalise(text).replace(/6=/g, '≠').replace(/6∈/g, '∉').replace(/7→/g, '↦');

/** The symbols KaTeX draws for a TeX string: its MathML's leaves, and √ for each root. */
function drawnSymbols(tex) {
  const mathml = katex
    .renderToString(tex, { output: 'mathml', throwOnError: false })
    .replace(/<annotation[\s\S]*?<\/annotation>/g, '')
    .replace(/<mo[^>]*>[^<]*<\/mo><\/mover>/g, '</mover>');
  const roots = (mathml.match(/<msqrt>/g) ?? []).length;
  const leaves = [...mathml.matchAll(/<(mi|mn|mo|mtext)\b[^>]*>([^<]*)<\/\1>/g)].map((match) => match[2]);
  const text = leaves.join('').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
  return normalise(text + '√'.repeat(roots));
}

const sorted = (text) => [...text].sort().join('');

let withTex = 0;
let same = 0;
for (const file of files) {
  let bytes;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch {
    continue;
  }
  let meta;
  try {
    meta = await inspectDocument(bytes.slice(), path.basename(file));
  } catch {
    continue;
  }
  const doc = await openPdf(bytes.slice());
  let fileTex = 0;
  let fileSame = 0;
  try {
    for (let number = 1; number <= meta.pageCount; number++) {
      const page = await convertLocalPage(doc, number, { docLang: meta.lang, tagged: meta.tagged, ocr: false });
      for (const block of page.blocks) {
        if (block.kind !== 'formula' || !block.tex) continue;
        fileTex++;
        const ok = sorted(drawnSymbols(block.tex)) === sorted(pageSymbols(block.text));
        if (ok) fileSame++;
        if (list) console.log(`${ok ? 'same' : 'DIFF'} ${path.basename(file)} p${number}: ${block.text.replace(/\s+/g, ' ')}  =>  ${block.tex}`);
      }
    }
  } finally {
    await doc.loadingTask.destroy();
  }
  withTex += fileTex;
  same += fileSame;
  if (fileTex > 0) console.log(`${path.basename(file)}: ${fileTex} with TeX, ${fileSame} same symbols`);
}
console.log(`total: ${withTex} formulas with TeX, ${same} with the page's symbols`);
