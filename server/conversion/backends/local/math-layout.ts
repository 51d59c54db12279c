import type { PageFrame } from './page-frame.ts';
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block } from '../../model.ts';
import type { OperatorList, Rule } from './drawing.ts';
import { type PlacedGlyph, pageGlyphPositions } from './glyph-positions.ts';
import type { BlockAnchor } from './page-blocks.ts';
import { fontStyle, type MathAlphabet } from './font-styles.ts';
import { accentedTex, CONDITION_WORDS, FUNCTIONS, SYMBOLS, withTag } from './tex.ts';
import type { TextItem } from './text-layer.ts';

/**
 * TeX of a displayed formula from where and in which font its glyphs are
 * drawn, not only from its text: a glyph raised and smaller is a superscript
 * of the glyph before it, lowered a subscript; glyphs of full size stacked
 * above and below the baseline (with or without the fraction bar between
 * them) are a fraction's numerator and denominator; glyphs over and under a
 * big operator are its limits; a radical sign takes what its overbar covers.
 * Fonts say what the text cannot: a bold letter is a vector (\mathbf), an
 * upright run of letters is an operator name (\operatorname{Ann}, \sin).
 * Returns undefined when a glyph has no TeX we are sure of.
 */

/** `alphabet`: the math alphabet a letter's font draws it in (msbm's blackboard R is \\mathbb{R}), when not the plain one */
export type MathGlyph = {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
  bold: boolean;
  italic: boolean;
  alphabet?: MathAlphabet;
  /** a delimiter grown over rows above and below its line (hanging-glyphs.ts' reach): big however narrow (a bar) */
  tall?: true;
};
/** A horizontal line drawn in the formula: a fraction bar or a radical's overbar. */
export type MathBar = { x1: number; x2: number; y: number };

type Glyph = MathGlyph & { right: number };

/** Below this share of the main size a glyph is a script or a limit. */
const SCRIPT_SIZE = 0.85;
/** A glyph this far (share of the size) from the baseline is off it. */
const OFF_BASELINE = 0.12;
/** Numerators and denominators sit at least this far (share of the size) from the baseline. */
const STACKED = 0.4;
/** Delimiters grow around what they enclose (TeX's \left( \right)): a big one is drawn off the line, and is on it. */
const DELIMITERS = /^[()[\]{}|‖∥⟨⟩〈〉]$/u;
const BIG_OPERATORS = new Set([...'∑∏∐∫∬∮⋃⋂⨁⨂⨀⨄⨆⋀⋁']);
/** Halfway up a lower-case letter, as a share of the size over the baseline. */
const X_HEIGHT_MIDDLE = 0.25;
/** TeX's math axis (where fraction bars and big operators are centred), as a share of the size over the baseline. */
export const AXIS = 0.25;
/** Script glyphs closer than this (share of the main size) on one baseline are one script: TeX sets a script's glyphs with no space between. */
const SCRIPT_GAP = 0.3;
/** A gap wider than this (share of the size) ends an upright name: TeX's thin space (1/6 em) after \ln, kerning is far less. */
const NAME_GAP = 0.12;

/** Splits text items into one glyph per character, sharing each item's width; spaces are dropped. */
function glyphsOf(items: MathGlyph[]): Glyph[] {
  const out: Glyph[] = [];
  for (const item of items) {
    // a letter keeps its combining marks (an accent TeX drew over it, text-layer.ts); a mark alone is a glyph of its own
    // (cmsy's negation slash, U+0338, drawn over the relation after it)
    const chars = item.text.match(/\P{M}\p{M}*|\p{M}+/gu) ?? [];
    const step = chars.length > 0 ? item.width / chars.length : 0;
    chars.forEach((char, index) => {
      if (/\s|\u200b/.test(char)) return;
      const x = item.x + step * index;
      out.push({ ...item, text: char, x, width: step, right: x + step });
    });
  }
  return out;
}

/**
 * pdfTeX draws a negated relation as a zero-width slash (which extracts as "6") over the relation, and \mapsto as a
 * zero-width bar (which extracts as "7") at the start of an arrow.
 */
const NEGATED: Record<string, string> = { '=': '≠', '∈': '∉' };
// cmsy's negation slash: "6" where pdf.js spells it by code, U+0338 where TeX Live's ToUnicode names it
const STRUCK: Record<string, Record<string, string>> = { '6': NEGATED, '\u0338': NEGATED, '7': { '→': '↦' } };

export function layoutToTex(items: MathGlyph[], bars: MathBar[] = []): string | undefined {
  const glyphs = glyphsOf(items);
  for (let index = glyphs.length - 1; index >= 0; index--) {
    const slash = glyphs[index]!;
    const struck = STRUCK[slash.text];
    if (!struck || slash.width > 0.01) continue;
    const relation = glyphs.find(
      (glyph) => glyph !== slash && struck[glyph.text] && Math.abs(glyph.x - slash.x) < slash.size * 0.3 && Math.abs(glyph.y - slash.y) < 1,
    );
    if (!relation) continue;
    relation.text = struck[relation.text]!;
    glyphs.splice(index, 1);
  }
  // and \cong as a ∼ set over an =
  for (let index = glyphs.length - 1; index >= 0; index--) {
    const tilde = glyphs[index]!;
    if (tilde.text !== '∼') continue;
    const centre = (glyph: Glyph) => (glyph.x + glyph.right) / 2;
    const equals = glyphs.find(
      (glyph) =>
        glyph.text === '=' && Math.abs(centre(glyph) - centre(tilde)) < tilde.size * 0.3 && tilde.y - glyph.y >= 0 && tilde.y - glyph.y < tilde.size * 0.6,
    );
    if (!equals) continue;
    equals.text = '≅';
    glyphs.splice(index, 1);
  }
  joinDots(glyphs);
  if (glyphs.length === 0) return undefined;
  const tex = row(glyphs, bars, bars.length > 0);
  // TeX's \cdots and \ldots are three dots on the page
  return (
    tex
      ?.replace(/\s+/g, ' ')
      .replace(/(?:\\cdot\s*){3}/g, '\\cdots ')
      .replace(/\.\s*\.\s*\./g, '\\ldots ')
      .trim() || undefined
  );
}

/**
 * TeX's \\vdots and \\ddots are three periods of the text face, one over another or stepping down to the right: one
 * glyph each (⋮ ⋱), on the lowest period's baseline. Read as periods they made a matrix's middle row punctuation.
 */
function joinDots(glyphs: Glyph[]): void {
  const dots = glyphs.filter((glyph) => glyph.text === '.').sort((a, b) => b.y - a.y || a.x - b.x);
  const used = new Set<Glyph>();
  for (const first of dots) {
    if (used.has(first)) continue;
    for (const [text, dx] of [
      ['⋮', 0],
      ['⋱', 1],
    ] as const) {
      const step = first.size * 0.4;
      const next = (from: Glyph) =>
        dots.find(
          (glyph) =>
            !used.has(glyph) &&
            glyph !== from &&
            from.y - glyph.y > step * 0.5 &&
            from.y - glyph.y < step * 1.5 &&
            (dx === 0 ? Math.abs(glyph.x - from.x) < first.size * 0.1 : glyph.x - from.x > step * 0.5 && glyph.x - from.x < step * 1.5),
        );
      const second = next(first);
      const third = second && next(second);
      if (!second || !third) continue;
      for (const glyph of [first, second, third]) used.add(glyph);
      glyphs.splice(glyphs.indexOf(second), 1);
      glyphs.splice(glyphs.indexOf(third), 1);
      Object.assign(first, { text, y: third.y, right: dx === 0 ? first.right : third.right, width: (dx === 0 ? first.right : third.right) - first.x });
      break;
    }
  }
}

const MAIN_RELATIONS = /^[=<>≤≥≠≈≡≅∼→⇒⇔]$/u;

/** The size most glyphs have, and the baseline most of those glyphs sit on. */
function mainLine(glyphs: Glyph[]): { size: number; baseline: number } {
  const count = new Map<number, number>();
  // a relation stands on the main line (a sum's limit may hold one, but a display's "=" is the line's): it counts
  // twice, so a line of one "=" beside a big operator and its limits is still the line (Times' ∑ is the Symbol
  // font's, bigger than the body)
  // a big operator drawn bigger than anything else (Palatino's ∑, Times'): it says nothing of the line's size
  const largest = Math.max(0, ...glyphs.filter((glyph) => !BIG_OPERATORS.has(glyph.text)).map((glyph) => glyph.size));
  const voters = largest > 0 ? glyphs.filter((glyph) => !BIG_OPERATORS.has(glyph.text) || glyph.size <= largest * 1.1) : glyphs;
  for (const glyph of voters)
    count.set(Math.round(glyph.size * 2) / 2, (count.get(Math.round(glyph.size * 2) / 2) ?? 0) + (MAIN_RELATIONS.test(glyph.text) ? 2 : 1));
  const max = Math.max(...count.keys());
  // the biggest size that is common; a formula's body is its biggest common size, scripts are smaller
  const size = [...count.entries()].filter(([, n]) => n * 4 >= glyphs.length || n >= 2).sort((a, b) => b[0] - a[0])[0]?.[0] ?? max;
  const ys = new Map<number, number>();
  for (const glyph of glyphs) if (Math.abs(glyph.size - size) <= size * 0.1) ys.set(Math.round(glyph.y), (ys.get(Math.round(glyph.y)) ?? 0) + 1);
  const baseline = [...ys.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
  return { size, baseline };
}

/** `labelled`: a long arrow's command when it has labels (its tex is the bare arrow's) */
type Atom = { x: number; right: number; tex: string; base?: Glyph; sup: Glyph[]; sub: Glyph[]; labelled?: string };

/** The pieces TeX draws a horizontal brace from (pdf.js spells cmex's brace tips with the vertical presentation forms). */
export const BRACE_TIPS = /^[︷︸⏞⏟]$/u;
const DOWN_TIPS = /^[︸⏟]$/u;

/**
 * Horizontal braces: \underbrace{…}_{label} and \overbrace{…}^{label}. TeX draws one from four tips (its ends and
 * the pair at its middle, the ends pointing the other way) joined by rules: the tips on one line, the content on the
 * side the ends open to, the label (small) on the other. The rules are no fraction bars; the rest goes on as it was.
 */
function braces(glyphs: Glyph[], bars: MathBar[], barred: boolean): { atoms: Atom[]; rest: Glyph[]; bars: MathBar[] } | undefined {
  const tips = glyphs.filter((glyph) => BRACE_TIPS.test(glyph.text)).sort((a, b) => a.x - b.x);
  if (tips.length < 4) return { atoms: [], rest: glyphs, bars };
  const atoms: Atom[] = [];
  let rest = glyphs;
  let left = bars;
  for (const first of tips) {
    const run = tips.filter((tip) => tip.x >= first.x && Math.abs(tip.y - first.y) <= first.size * 0.2).slice(0, 4);
    const [end, middle, middle2, close] = run;
    if (!end || !middle || !middle2 || !close || !rest.includes(end)) continue;
    // the ends alike, the middle pair alike and the other way: an underbrace's ends point down (︸ ︷︷ ︸)
    if (end.text !== close.text || middle.text !== middle2.text || end.text === middle.text) continue;
    const under = DOWN_TIPS.test(end.text);
    const [x1, x2] = [end.x, close.right];
    const inside = (glyph: Glyph) => (glyph.x + glyph.right) / 2 >= x1 && (glyph.x + glyph.right) / 2 <= x2;
    const others = rest.filter((glyph) => !run.includes(glyph));
    const content = others.filter((glyph) => inside(glyph) && (under ? glyph.y > end.y : glyph.y < end.y));
    // the label: small, within a line of the tips (the next row of an aligned formula is no label)
    const label = others.filter(
      (glyph) =>
        glyph.size < end.size * SCRIPT_SIZE &&
        (glyph.x + glyph.right) / 2 >= x1 - end.size &&
        (glyph.x + glyph.right) / 2 <= x2 + end.size &&
        (under ? glyph.y < end.y && glyph.y >= end.y - end.size * 1.5 : glyph.y > end.y + end.size * 0.5 && glyph.y <= end.y + end.size * 2),
    );
    // the rules between the tips: on the tips' line, within their stretch
    const rules = left.filter((bar) => bar.x1 >= x1 - 1 && bar.x2 <= x2 + 1 && Math.abs(bar.y - (end.y + end.size * (under ? 0.1 : -0.1))) <= end.size * 0.6);
    const innerBars = left.filter((bar) => !rules.includes(bar));
    const body = row(content, innerBars, barred);
    const note = label.length > 0 ? row(label, innerBars, barred) : '';
    if (!body || note === undefined) return undefined;
    const tex = under ? `\\underbrace{${body}}${note ? `_{${note}}` : ''}` : `\\overbrace{${body}}${note ? `^{${note}}` : ''}`;
    atoms.push({ x: x1, right: x2, tex, sup: [], sub: [] });
    rest = others.filter((glyph) => !content.includes(glyph) && !label.includes(glyph));
    left = innerBars;
  }
  return { atoms, rest, bars: left };
}

/** A delimiter reaching this many sizes is grown over rows (a text bar reaches about 1). */
const TALL = 1.5;

/** A parenthesis of a text font is about 0.39 em wide; TeX's bigger ones (cmex's \\big to \\Bigg, and stacked pieces) 0.45 em and more. */
const BIG_DELIMITER_WIDTH = 0.44;
/** Columns of a matrix stand apart by twice TeX's \\arraycolsep (10 pt at 10 pt): more than the widest space inside a cell (a relation's, 0.28 em). */
const COLUMN_GAP = 0.6;
const OPENING: Record<string, { close: string; env: string }> = {
  '(': { close: ')', env: 'pmatrix' },
  '[': { close: ']', env: 'bmatrix' },
  '{': { close: '}', env: 'Bmatrix' },
  '|': { close: '|', env: 'vmatrix' },
  '‖': { close: '‖', env: 'Vmatrix' },
  '∥': { close: '∥', env: 'Vmatrix' },
};

/**
 * Matrices: rows of cells between two big delimiters on one baseline
 * (\begin{pmatrix}a&b\\c&d\end{pmatrix}, a binomial's two lines), and a case
 * split: rows after a big brace that nothing closes (\begin{cases}…). A
 * cell's place is where its ink's middle is: a fraction's bar, a glyph's
 * middle; a new row starts where the middles drop by more than half an em,
 * a column where a gap of an em runs down all the rows. Each cell is read
 * as a formula of its own. The rest of the glyphs go on as they were;
 * undefined when a cell cannot be read.
 */
function matrices(glyphs: Glyph[], bars: MathBar[], barred: boolean): { atoms: Atom[]; rest: Glyph[] } | undefined {
  const big = glyphs.filter((glyph) => (OPENING[glyph.text] || /^[)\]}]$/.test(glyph.text)) && (glyph.tall || glyph.width >= glyph.size * BIG_DELIMITER_WIDTH));
  if (big.length === 0) return { atoms: [], rest: glyphs };
  const atoms: Atom[] = [];
  let rest = glyphs;
  for (const { open, close } of delimiterPairs(big)) {
    const kind = OPENING[open.text]!;
    // a bar reaching over both is a fraction's, the pair in its numerator or denominator: what is under it is not theirs
    if (close && bars.some((bar) => bar.x1 <= open.x + 1 && bar.x2 >= close.right - 1)) continue;
    const end = close?.x ?? Number.POSITIVE_INFINITY;
    const inner = rest.filter(
      (glyph) => glyph !== open && glyph !== close && (glyph.x + glyph.right) / 2 > open.right - 0.5 && (glyph.x + glyph.right) / 2 < end + 0.5,
    );
    const innerBars = bars.filter((bar) => bar.x1 >= open.right - 1 && bar.x2 <= end + 1);
    // cells may be set smaller than the line (a matrix of \tfrac): rows and columns are measured in their own size
    const cells = inner.length > 0 ? grid(inner, innerBars, mainLine(inner).size) : undefined;
    if (!cells) continue;
    const rows: string[] = [];
    for (const cellRow of cells) {
      const read = cellRow.map((cell) => row(cell, innerBars, barred));
      if (read.some((tex) => tex === undefined)) return undefined;
      rows.push(read.join('&'));
    }
    const env = close ? kind.env : 'cases';
    // two lines in parentheses, as an author writes a binomial coefficient
    const binomial = env === 'pmatrix' && cells.length === 2 && cells[0]!.length === 1;
    const right = close?.right ?? Math.max(...inner.map((glyph) => glyph.right));
    const tex = binomial ? `\\binom{${rows[0]}}{${rows[1]}}` : `\\begin{${env}}${rows.join('\\\\')}\\end{${env}}`;
    atoms.push({ x: open.x, right, tex, sup: [], sub: [] });
    rest = rest.filter((glyph) => glyph !== open && glyph !== close && !inner.includes(glyph));
  }
  return { atoms, rest };
}

/**
 * Big delimiters paired as they nest, innermost first (a product of two matrices in parentheses is read as two
 * matrices, and the parentheses around them stay parentheses), each on its partner's baseline; a big brace nothing
 * closes opens a case split, which runs to the formula's end (its close undefined).
 */
function delimiterPairs(big: Glyph[]): { open: Glyph; close?: Glyph }[] {
  const pairs: { open: Glyph; close?: Glyph; depth: number }[] = [];
  const open: Glyph[] = [];
  for (const glyph of [...big].sort((a, b) => a.x - b.x)) {
    const opening = OPENING[glyph.text];
    // a bar opens when no bar of its kind is open on its line, and closes the one that is
    const partner = open.findLastIndex((candidate) => OPENING[candidate.text]!.close === glyph.text && Math.abs(candidate.y - glyph.y) <= glyph.size * 0.2);
    if (partner >= 0 && (!opening || opening.close === glyph.text)) {
      pairs.push({ open: open[partner]!, close: glyph, depth: partner });
      open.splice(partner);
    } else if (opening) open.push(glyph);
  }
  for (const [depth, glyph] of open.entries()) if (glyph.text === '{') pairs.push({ open: glyph, depth });
  return pairs.sort((a, b) => b.depth - a.depth);
}

const PUNCTUATION = /^[,.;:·…⋯]$/u;

/** A matrix's cells, row by row, each cell's glyphs; undefined when the glyphs stand in one row only. */
function grid(glyphs: Glyph[], bars: MathBar[], size: number): Glyph[][][] | undefined {
  const full = glyphs.filter((glyph) => glyph.size >= size * SCRIPT_SIZE);
  if (full.length === 0) return undefined;
  // each full-size glyph's middle, or its fraction's bar: a fraction is one cell, at its bar
  const fractions = barFractions(glyphs, bars);
  const middleOf = new Map<Glyph, number>();
  for (const fraction of fractions) for (const glyph of [...fraction.top, ...fraction.bottom]) middleOf.set(glyph, fraction.bar.y);
  for (const glyph of full) if (!middleOf.has(glyph)) middleOf.set(glyph, glyph.y + glyph.size * AXIS);
  const middles = [...new Set(full.map((glyph) => middleOf.get(glyph)!))].sort((a, b) => b - a);
  const rowMiddles: number[][] = [];
  for (const middle of middles) {
    const last = rowMiddles.at(-1);
    if (last && last.at(-1)! - middle <= size * 0.5) last.push(middle);
    else rowMiddles.push([middle]);
  }
  // a row of punctuation alone is the line between the numerators and denominators of fractions we could not see a bar of
  if (
    rowMiddles.length < 2 ||
    rowMiddles.some((list) => full.filter((glyph) => list.includes(middleOf.get(glyph)!)).every((glyph) => PUNCTUATION.test(glyph.text)))
  )
    return undefined;
  const rowOf = (glyph: Glyph): number => {
    const middle = middleOf.get(glyph) ?? glyph.y + glyph.size * AXIS;
    // a script goes to the row whose middles are nearest its own
    let best = 0;
    let distance = Number.POSITIVE_INFINITY;
    for (const [index, list] of rowMiddles.entries()) {
      const off = Math.min(...list.map((entry) => Math.abs(entry - middle)));
      if (off < distance) [best, distance] = [index, off];
    }
    return best;
  };
  // columns: stretches of x that ink covers in some row, apart where a gap of an em runs down every row
  const spans = glyphs.map((glyph) => ({ x: glyph.x, right: glyph.right }));
  for (const fraction of fractions) spans.push({ x: fraction.bar.x1, right: fraction.bar.x2 });
  spans.sort((a, b) => a.x - b.x);
  const columns: { x: number; right: number }[] = [];
  for (const span of spans) {
    const last = columns.at(-1);
    if (last && span.x - last.right < size * COLUMN_GAP) last.right = Math.max(last.right, span.right);
    else columns.push({ ...span });
  }
  const columnOf = (glyph: Glyph) => {
    const middle = (glyph.x + glyph.right) / 2;
    const index = columns.findIndex((column) => middle <= column.right + size * 0.5);
    return index === -1 ? columns.length - 1 : index;
  };
  const cells: Glyph[][][] = rowMiddles.map(() => columns.map(() => []));
  for (const glyph of glyphs) cells[rowOf(glyph)]![columnOf(glyph)]!.push(glyph);
  return cells;
}

/** An arrow's head, by the shaft pdfTeX draws before it to make it long (\Longrightarrow, \xrightarrow{…}). */
const ARROW_HEADS: Record<string, { shaft: RegExp; long: string; labelled: string }> = {
  '⇒': { shaft: /^=$/, long: '\\Longrightarrow', labelled: '\\xRightarrow' },
  '→': { shaft: /^[−-]$/, long: '\\longrightarrow', labelled: '\\xrightarrow' },
};

/**
 * Shaft pieces touching each other and an arrow's head ("====⇒", "−−−→") are one long arrow: one atom, which the
 * small lines over and under it then go to as its labels, where they were scripts of single "=" before.
 */
function longArrows(atoms: Atom[], size: number): Atom[] {
  // a head drawn over its whole shaft starts where the shaft does (\\xrightarrow{g}): the shaft first
  const ordered = [...atoms];
  for (let index = 0; index + 1 < ordered.length; index++) {
    const head = ordered[index]!.base && ARROW_HEADS[ordered[index]!.base!.text];
    const shaft = ordered[index + 1]!;
    if (head && shaft.base && head.shaft.test(shaft.base.text) && shaft.x - ordered[index]!.x < size * 0.1)
      [ordered[index], ordered[index + 1]] = [shaft, ordered[index]!];
  }
  const out: Atom[] = [];
  for (const atom of ordered) {
    const head = atom.base && ARROW_HEADS[atom.base.text];
    let start = out.length;
    while (head && start > 0) {
      const piece = out[start - 1]!;
      const next = start < out.length ? out[start]! : atom;
      if (!piece.base || !head.shaft.test(piece.base.text) || next.x - piece.right > size * 0.15) break;
      start--;
    }
    if (!head || start === out.length) {
      out.push(atom);
      continue;
    }
    const first = out.splice(start)[0]!;
    out.push({ x: first.x, right: atom.right, tex: head.long, sup: [], sub: [], labelled: head.labelled });
  }
  return out;
}

/** amsmath draws \\iint and \\iiint as integral signs set close (a quarter of the size apart at most): one operator, taking the limits under them. */
const INTEGRALS = ['∫', '∬', '∭'];

function multipleIntegrals(atoms: Atom[], size: number): Atom[] {
  const out: Atom[] = [];
  for (const atom of atoms) {
    const last = out.at(-1);
    const count = last?.base ? INTEGRALS.indexOf(last.base.text) + 1 : 0;
    if (last?.base && atom.base?.text === '∫' && count > 0 && count < 3 && atom.x - last.right < size * 0.25) {
      last.base = { ...last.base, text: INTEGRALS[count]!, right: atom.right, width: atom.right - last.base.x };
      last.right = atom.right;
      continue;
    }
    out.push(atom);
  }
  return out;
}

/**
 * `barred`: the formula's fraction bars are known (a formula over several
 * lines): glyphs stacked over the line without a bar between are then another
 * line of it (an aligned equation's next row), not a fraction.
 */
function row(all: Glyph[], allBars: MathBar[], barred: boolean): string | undefined {
  if (all.length === 0) return '';
  const atoms: Atom[] = [];
  // a brace over or under part of the row, and a matrix (or a case split), first: each holds a row of its own, stacked
  // where the line's glyphs would be scripts
  const braced = braces(all, allBars, barred);
  if (!braced) return undefined;
  const bars = braced.bars;
  const tables = matrices(braced.rest, bars, barred);
  if (!tables) return undefined;
  atoms.push(...braced.atoms, ...tables.atoms);
  // a part is read with the bars inside it only: the fraction's own bar and a neighbour's are not its business
  const inside = (bar: MathBar, outer: MathBar, above: boolean) =>
    bar !== outer && bar.x1 >= outer.x1 - 1 && bar.x2 <= outer.x2 + 1 && (above ? bar.y > outer.y : bar.y < outer.y);
  const readRadical = (radical: Radical): Atom | undefined => {
    const inner = row(
      radical.under,
      bars.filter((bar) => inside(bar, radical.bar, false)),
      barred,
    );
    const index = radical.index.length > 0 ? row(radical.index, [], barred) : '';
    if (!inner || index === undefined) return undefined;
    return { x: radical.sign.x, right: radical.bar.x2, tex: `\\sqrt${index ? `[${index}]` : ''}{${inner}}`, sup: [], sub: [] };
  };
  const inRoot = (radical: Radical) => (glyph: Glyph) => glyph === radical.sign || radical.under.includes(glyph) || radical.index.includes(glyph);
  // a root over a fraction (\\sqrt{\\frac{a}{b}}) first: its radicand holds the fraction, bar and all
  const outerRoots = radicals(tables.rest, bars).filter((radical) =>
    bars.some(
      (bar) =>
        inside(bar, radical.bar, false) &&
        radical.under.some((glyph) => over(glyph, bar) && glyph.y > bar.y) &&
        radical.under.some((glyph) => over(glyph, bar) && glyph.y < bar.y),
    ),
  );
  let glyphs = tables.rest;
  for (const radical of outerRoots) {
    const atom = readRadical(radical);
    if (!atom) return undefined;
    atoms.push(atom);
    glyphs = glyphs.filter((glyph) => !inRoot(radical)(glyph));
  }
  // then fractions drawn with a bar, then radicals: each takes its glyphs out of the row, read on their own
  const drawnFractions = barFractions(
    glyphs,
    bars.filter((bar) => !outerRoots.some((radical) => bar === radical.bar || inside(bar, radical.bar, false))),
  );
  const scriptFractions = raisedFractions(drawnFractions, glyphs);
  const fractions = drawnFractions.filter((fraction) => !scriptFractions.includes(fraction));
  for (const fraction of fractions) {
    const top = row(
      fraction.top,
      bars.filter((bar) => inside(bar, fraction.bar, true)),
      barred,
    );
    const bottom = row(
      fraction.bottom,
      bars.filter((bar) => inside(bar, fraction.bar, false)),
      barred,
    );
    if (!top || !bottom) return undefined;
    atoms.push({ x: fraction.bar.x1, right: fraction.bar.x2, tex: `\\frac{${top}}{${bottom}}`, sup: [], sub: [] });
  }
  const owned = new Set(drawnFractions.flatMap((fraction) => [...fraction.top, ...fraction.bottom]));
  let rest = glyphs.filter((glyph) => !owned.has(glyph));
  if (rest.length === 0) return joinTex(atoms.sort((a, b) => a.x - b.x).map((atom) => atom.tex));
  const innerRoots = radicals(rest, bars);
  for (const radical of innerRoots) {
    const atom = readRadical(radical);
    if (!atom) return undefined;
    atoms.push(atom);
    rest = rest.filter((glyph) => !inRoot(radical)(glyph));
  }
  const used = new Set([...fractions.map((fraction) => fraction.bar), ...[...outerRoots, ...innerRoots].map((radical) => radical.bar)]);
  for (const line of rest.length > 0 ? overlines(rest, all, bars, used, mainLine(rest)) : []) {
    const inner = row(line.under, [], barred);
    if (!inner) return undefined;
    atoms.push({ x: line.bar.x1, right: line.bar.x2, tex: `\\overline{${inner}}`, sup: [], sub: [] });
    rest = rest.filter((glyph) => !line.under.includes(glyph));
  }
  if (rest.length === 0) return joinTex(atoms.sort((a, b) => a.x - b.x).map((atom) => atom.tex));
  const { size, baseline } = mainLine(rest);
  const onLine: Glyph[] = [];
  const above: Glyph[] = [];
  const below: Glyph[] = [];
  const small: Glyph[] = [];
  for (const glyph of rest) {
    const rise = glyph.y - baseline;
    if (glyph.size < size * SCRIPT_SIZE) small.push(glyph);
    else if (Math.abs(rise) <= size * OFF_BASELINE || DELIMITERS.test(glyph.text) || BIG_OPERATORS.has(glyph.text)) onLine.push(glyph);
    else if (rise >= size * STACKED && rise < size * SCRIPTSCRIPT_RISE && hugsBase(glyph, rest, baseline, size)) small.push(glyph);
    else if (rise >= size * STACKED) above.push(glyph);
    else if (rise <= -size * STACKED) below.push(glyph);
    else onLine.push(glyph);
  }
  // fractions set without a bar (or with one drawn in a way we do not read): each stack of full-size glyphs above and below the line, over the same stretch
  const stacks = stacksOf(above, below, small, baseline, size);
  const inStacks = new Set(stacks.flatMap((stack) => [...stack.top, ...stack.bottom]));
  // with the bars known, a full-size glyph off the line is in no place we can say (read from one line, glyphs of the
  // lines around it may stray into its reach, and are left out)
  if (barred && [...above, ...below].length > 0) return undefined;
  for (const stack of stacks) {
    const top = row(stack.top, bars, barred);
    const bottom = row(stack.bottom, bars, barred);
    if (top === undefined || bottom === undefined || top === '' || bottom === '') return undefined;
    atoms.push({ x: stack.x, right: stack.right, tex: `\\frac{${top}}{${bottom}}`, sup: [], sub: [] });
  }
  for (const glyph of onLine.sort((a, b) => a.x - b.x)) atoms.push({ x: glyph.x, right: glyph.right, tex: '', base: glyph, sup: [], sub: [] });
  atoms.sort((a, b) => a.x - b.x);
  atoms.splice(0, atoms.length, ...multipleIntegrals(longArrows(atoms, size), size));
  // scripts and limits go to the atom they follow (or, for limits, stand over or hang beside), a group of them at once:
  // an exponent of two glyphs is one exponent even where its second glyph reaches past the next atom's start
  const names = limitNames(atoms, size);
  const nameLimits = new Map<Glyph[], { y: number; right: number }>();
  const groups = [
    ...scriptGroups(small.filter((entry) => !inStacks.has(entry))).map((group) => ({
      group,
      first: { x: group[0]!.x, y: group[0]!.y, size: group[0]!.size },
      groupRight: Math.max(...group.map((glyph) => glyph.right)),
    })),
    // a fraction in an exponent is one script, read with the glyphs beside it (e^{-\frac{x^2}{4t}})
    ...scriptFractions.map((fraction) => ({
      group: [...fraction.top, ...fraction.bottom],
      first: { x: fraction.bar.x1, y: fraction.bar.y, size: fraction.top[0]!.size },
      groupRight: fraction.bar.x2,
    })),
  ];
  for (const { group, first, groupRight } of groups) {
    // a line under an operator name that takes limits (lim, max) is its limit: centred under the name, it may start
    // left of it or under any of its letters, and a limit wider than TeX's script spacing goes on past it
    const named =
      first.y < baseline - size * STACKED
        ? names.find((name) => {
            const limit = nameLimits.get(name);
            if (limit && Math.abs(limit.y - first.y) <= first.size * 0.1 && first.x - limit.right <= size * 0.5 && first.x >= limit.right - 0.5) return true;
            return first.x < name.at(-1)!.right && groupRight > name[0]!.x;
          })
        : undefined;
    if (named) {
      const last = atoms.find((atom) => atom.base === named.at(-1))!;
      last.sub.push(...group);
      nameLimits.set(named, { y: first.y, right: Math.max(groupRight, nameLimits.get(named)?.right ?? groupRight) });
      continue;
    }
    // a big operator's limits stand over or under it (a limit wider than the operator starts left of it) or hang
    // just beside it, as any atom's scripts; a group after the operator's summand is the summand's (\sum_{i=1}^{n}x_{i}^{2})
    const preceding = [...atoms].reverse().find((atom) => atom.x <= first.x + size * 0.1);
    const owner = atoms.find((atom) => atom.base && BIG_OPERATORS.has(atom.base.text) && first.x < atom.right && groupRight > atom.x) ?? preceding;
    if (!owner) return undefined;
    // a big operator's limits are over and under it, or raised and lowered beside it, wherever its font puts its
    // baseline (TeX's cmex hangs it from its top, so its baseline is above an upper limit hung beside it): the
    // formula's axis, a quarter of the size over its baseline, which the operator is centred on, parts them
    const big = owner.base !== undefined && BIG_OPERATORS.has(owner.base.text);
    // lower than TeX drops any subscript, a small glyph is the next line's (its exponent, read in this one's area)
    if (!big && first.y < baseline - size * SUBSCRIPT_DROP) continue;
    const level = big ? baseline + size * AXIS : baseline;
    (first.y > level ? owner.sup : owner.sub).push(...group);
  }
  // the script glyphs of one atom follow each other; an atom whose scripts are empty stays as it is
  const parts: string[] = [];
  let word: Glyph[] = [];
  const flushWord = () => {
    if (word.length > 0) parts.push(wordTex(word, size));
    word = [];
  };
  for (const [index, atom] of atoms.entries()) {
    const glyph = atom.base;
    const scripts = scriptsTex(atom, bars, barred);
    if (scripts === undefined) return undefined;
    // two equations on one row, set apart after a comma ("a = b, \\qquad c = d")
    const before = atoms[index - 1];
    if (before && atom.x - before.right > size * QQUAD && /[,;]$/.test(parts.at(-1) ?? '')) parts.push('\\qquad ');
    if (glyph && /^\p{Script=Latin}$/u.test(glyph.text) && !glyph.italic && !glyph.bold && !glyph.alphabet) {
      // upright letters next to each other are one name ("Ann", "sin"); a gap ends it, and so does a script, which
      // is the whole name's (cos² is \cos^{2}, not co s²)
      const previous = word.at(-1);
      const oneName = names.some((name) => previous && name.includes(previous) && name.includes(glyph));
      if (previous && glyph.x - previous.right > size * NAME_GAP && !oneName) flushWord();
      word.push(glyph);
      const next = atoms[index + 1]?.base;
      if (scripts !== '') {
        parts.push(`${wordTex(word, size)}${scripts}`);
        word = [];
      } else if (!next || !/^\p{Script=Latin}$/u.test(next.text) || next.italic || next.bold || next.alphabet) flushWord();
      continue;
    }
    flushWord();
    if (atom.labelled) {
      const arrow = arrowTex(atom, atom.labelled, bars, barred);
      if (arrow === undefined) return undefined;
      parts.push(arrow);
      continue;
    }
    const body = glyph ? glyphTex(glyph) : atom.tex;
    if (body === undefined) return undefined;
    const fraction = glyph && SCRIPTLESS.test(glyph.text) ? smallFraction(atom, bars, barred) : undefined;
    parts.push(fraction === undefined ? `${body}${scripts}` : `${body}${fraction}`);
  }
  flushWord();
  return joinTex(parts);
}

/**
 * Script glyphs in groups, left to right: glyphs on one baseline (within a
 * tenth of their size) that follow each other without a gap are one script
 * or one limit, read together.
 */
function scriptGroups(glyphs: Glyph[]): Glyph[][] {
  const groups: Glyph[][] = [];
  for (const glyph of [...glyphs].sort((a, b) => a.x - b.x)) {
    const group = groups.find((candidate) => {
      const last = candidate.at(-1)!;
      if (glyph.x < last.x || glyph.x - last.right > last.size * SCRIPT_GAP) return false;
      // a smaller glyph raised or lowered just after is the script's own script (the i of a limit V_i), read with it,
      // and the script goes on after it on its own baseline (V_i\cap V_j)
      const nested = glyph.size < last.size * SCRIPT_SIZE && glyph.y - last.y <= last.size * 0.7 && last.y - glyph.y <= last.size * 0.5;
      return nested || candidate.some((member) => Math.abs(member.y - glyph.y) <= member.size * 0.1 && Math.abs(member.size - glyph.size) <= member.size * 0.1);
    });
    if (group) group.push(glyph);
    else groups.push([glyph]);
  }
  return groups;
}

/** Whether a glyph's middle lies over a bar's stretch. */
const over = (glyph: Glyph, bar: MathBar) => (glyph.x + glyph.right) / 2 >= bar.x1 && (glyph.x + glyph.right) / 2 <= bar.x2;

const length = (bar: MathBar) => bar.x2 - bar.x1;

/**
 * Fraction bars: drawn lines with glyphs standing over and under them. Each
 * glyph goes to the bar nearest its ink (a matrix of fractions stacks bars
 * one under another: a glyph between two is the lower one's numerator or
 * the upper one's denominator, whichever it sits against). A shorter bar
 * sits in the numerator or denominator of the nearest longer bar over or
 * under it (a nested fraction, a root's overbar) unless glyphs of that bar's
 * own part stand between them; the bars in nobody's part with glyphs on
 * both sides are this row's fractions, each with every glyph of its parts.
 */
function barFractions(glyphs: Glyph[], bars: MathBar[]): { bar: MathBar; top: Glyph[]; bottom: Glyph[] }[] {
  // a root's overbar is no fraction bar: what stands under it is the radicand, read with the root (radicals)
  const roots = glyphs.filter((glyph) => glyph.text === '√');
  const fractionBars = bars.filter((bar) => !roots.some((sign) => Math.abs(bar.x1 - sign.right) <= sign.size * 0.5 && bar.y > sign.y));
  if (fractionBars.length === 0) return [];
  const side = new Map<Glyph, { bar: MathBar; above: boolean }>();
  for (const glyph of glyphs) {
    let best: { bar: MathBar; above: boolean; gap: number } | undefined;
    for (const bar of fractionBars) {
      if (!over(glyph, bar)) continue;
      const above = glyph.y > bar.y;
      const gap = Math.max(0, above ? glyph.y - glyph.size * 0.25 - bar.y : bar.y - (glyph.y + glyph.size * 0.75));
      if (gap > glyph.size * 1.5) continue;
      if (!best || gap < best.gap - 0.5 || (gap < best.gap + 0.5 && length(bar) < length(best.bar))) best = { bar, above, gap };
    }
    if (best) side.set(glyph, best);
  }
  // TeX sets a numerator or a denominator in one size: a glyph standing over (or under) a smaller glyph of the same
  // part, further from the bar, is not in that part (the next row of a matrix over a \tfrac's numerator or under its
  // denominator); a small glyph beside a big one (a prime, a script) takes nothing away
  const gapOf = (glyph: Glyph, bar: MathBar) => Math.abs(glyph.y + glyph.size * AXIS - bar.y);
  const placed = [...side];
  for (const [glyph, at] of placed) {
    const shadowed = placed.some(
      ([other, place]) =>
        place.bar === at.bar &&
        place.above === at.above &&
        other.size < glyph.size * SCRIPT_SIZE &&
        (other.x + other.right) / 2 > glyph.x &&
        (other.x + other.right) / 2 < glyph.right &&
        gapOf(other, at.bar) < gapOf(glyph, at.bar),
    );
    if (shadowed) side.delete(glyph);
  }
  // a script goes where its base (a letter, a digit, a closing bracket) goes: a denominator's subscript can sit nearer
  // the bar under it than the one over it
  for (const glyph of glyphs) {
    const base = glyphs.find(
      (other) =>
        /^[\p{L}\p{N})\]}|′']$/u.test(other.text) &&
        other.size > glyph.size * 1.15 &&
        other.right >= glyph.x - other.size * 0.15 &&
        other.right <= glyph.x + other.size * 0.1 &&
        Math.abs(other.y - glyph.y) < other.size * 0.6,
    );
    if (!base) continue;
    const at = side.get(base);
    if (at) side.set(glyph, at);
    else side.delete(glyph);
  }
  const parent = new Map<MathBar, { bar: MathBar; above: boolean }>();
  for (const bar of fractionBars) {
    let best: { bar: MathBar; above: boolean; distance: number } | undefined;
    for (const other of fractionBars) {
      if (other === bar || length(other) <= length(bar) + 0.5 || other.x1 > bar.x1 + 1 || other.x2 < bar.x2 - 1) continue;
      const above = bar.y > other.y;
      const between = glyphs.some((glyph) => {
        const at = side.get(glyph);
        return at?.bar === other && at.above === above && over(glyph, bar) && (above ? glyph.y < bar.y : glyph.y > bar.y);
      });
      const distance = Math.abs(bar.y - other.y);
      if (!between && (!best || distance < best.distance)) best = { bar: other, above, distance };
    }
    if (best) parent.set(bar, best);
  }
  const part = (bar: MathBar, above: boolean): Glyph[] => [
    ...glyphs.filter((glyph) => side.get(glyph)?.bar === bar && side.get(glyph)!.above === above),
    ...bars
      .filter((child) => parent.get(child)?.bar === bar && parent.get(child)!.above === above)
      .flatMap((child) => [...part(child, true), ...part(child, false)]),
  ];
  const out: { bar: MathBar; top: Glyph[]; bottom: Glyph[] }[] = [];
  for (const bar of fractionBars) {
    if (parent.has(bar)) continue;
    const top = part(bar, true);
    const bottom = part(bar, false);
    if (top.length > 0 && bottom.length > 0) out.push({ bar, top, bottom });
  }
  return out;
}

/**
 * Radicals: a √ sign and the bar drawn from its top right over the radicand;
 * what stands under the bar is the radicand. Left to right, so a root inside
 * another is read with the outer one's radicand.
 */
type Radical = { sign: Glyph; bar: MathBar; under: Glyph[]; index: Glyph[] };

function radicals(glyphs: Glyph[], bars: MathBar[]): Radical[] {
  const signs = glyphs.filter((glyph) => glyph.text === '√').sort((a, b) => a.x - b.x);
  const barOf = new Map<Glyph, MathBar>();
  for (const sign of signs) {
    const bar = bars
      .filter(
        // a sign grown over a sum's limits hangs lower under its bar
        (candidate) =>
          Math.abs(candidate.x1 - sign.right) <= sign.size * 0.5 && candidate.y > sign.y && candidate.y - sign.y < sign.size * (sign.tall ? 4 : 2.5),
      )
      .sort((a, b) => a.y - b.y)[0];
    if (bar) barOf.set(sign, bar);
  }
  // a glyph under this root's bar is another root's when that root's bar, lower, covers it too and its sign stands
  // outside this root (\frac{\sqrt{a}}{\sqrt{b}}: the denominator's b is under both bars); a root inside this one
  // is read with its radicand (\sqrt{1 + \sqrt{x}})
  const otherRoot = (glyph: Glyph, sign: Glyph, bar: MathBar) =>
    [...barOf].some(([other, otherBar]) => other !== sign && !over(other, bar) && over(glyph, otherBar) && otherBar.y < bar.y && otherBar.y > glyph.y);
  const out: Radical[] = [];
  const taken = new Set<Glyph>();
  for (const sign of signs) {
    const bar = barOf.get(sign);
    if (taken.has(sign) || !bar) continue;
    const under = glyphs.filter((glyph) => glyph !== sign && over(glyph, bar) && glyph.y < bar.y && !taken.has(glyph) && !otherRoot(glyph, sign, bar));
    if (under.length === 0) continue;
    // a root's index (\\sqrt[3]) is set small over the sign's left arm, ending before its stroke rises
    const index = glyphs.filter(
      (glyph) =>
        !taken.has(glyph) &&
        !under.includes(glyph) &&
        glyph.size < sign.size * SCRIPT_SIZE &&
        glyph.y > sign.y &&
        glyph.y < bar.y &&
        glyph.right <= sign.x + (sign.right - sign.x) * 0.75 &&
        glyph.right > sign.x - glyph.size * 0.2,
    );
    for (const glyph of [...under, ...index]) taken.add(glyph);
    out.push({ sign, bar, under, index });
  }
  return out;
}

/**
 * Bars that neither a fraction nor a root took, drawn just over glyphs that fill their length, with nothing over
 * them: \\overline (a complex conjugate, a closure), each with the glyphs it covers.
 */
function overlines(
  glyphs: Glyph[],
  all: Glyph[],
  bars: MathBar[],
  used: Set<MathBar>,
  line: { size: number; baseline: number },
): { bar: MathBar; under: Glyph[] }[] {
  const out: { bar: MathBar; under: Glyph[] }[] = [];
  const taken = new Set<Glyph>();
  for (const bar of bars) {
    if (used.has(bar)) continue;
    // over glyphs of the row's own line: a lowered piece under a bar is a fraction's denominator whose numerator was lost
    // (a script of a glyph under it is under it too, however far below the bar: p(\gamma_{g}) under one bar)
    const under = glyphs.filter(
      (glyph) =>
        !taken.has(glyph) &&
        over(glyph, bar) &&
        glyph.y < bar.y &&
        (glyph.size < line.size * SCRIPT_SIZE
          ? Math.abs(glyph.y - line.baseline) <= line.size * 0.5
          : bar.y - (glyph.y + glyph.size * 0.7) <= glyph.size * 0.5 && Math.abs(glyph.y - line.baseline) <= line.size * OFF_BASELINE),
    );
    // anything of the row's over the bar makes it a fraction's, however it was read
    if (under.length === 0 || all.some((glyph) => over(glyph, bar) && glyph.y > bar.y && glyph.y - bar.y < glyph.size * 1.5)) continue;
    const left = Math.min(...under.map((glyph) => glyph.x));
    const right = Math.max(...under.map((glyph) => glyph.right));
    if (right - left < (bar.x2 - bar.x1) * 0.6) continue;
    for (const glyph of under) taken.add(glyph);
    out.push({ bar, under });
  }
  return out;
}

/**
 * Fractions set in a script (an exponent's \\frac): their glyphs are in a script's size, their bar raised well above
 * the axis of the line they are on. Only where the row has a line of its own outside its fractions.
 */
function raisedFractions(fractions: { bar: MathBar; top: Glyph[]; bottom: Glyph[] }[], glyphs: Glyph[]) {
  if (fractions.length === 0) return [];
  const owned = new Set(fractions.flatMap((fraction) => [...fraction.top, ...fraction.bottom]));
  const others = glyphs.filter((glyph) => !owned.has(glyph));
  if (others.length === 0) return [];
  const { size, baseline } = mainLine(others);
  return fractions.filter((fraction) => {
    const own = [...fraction.top, ...fraction.bottom];
    // nothing under it: a fraction over another one, or over a line, is a matrix's or a numerator's
    const under = (glyph: Glyph) => !own.includes(glyph) && over(glyph, fraction.bar) && glyph.y < fraction.bar.y;
    return fraction.bar.y > baseline + size * SCRIPT_BAR_RISE && own.every((glyph) => glyph.size < size * SCRIPT_SIZE) && !glyphs.some(under);
  });
}

/** A fraction's bar on the line's axis is a quarter of the size over its baseline; an exponent's is more than this. */
const SCRIPT_BAR_RISE = 0.45;

/**
 * TeX has no face smaller than scriptscript: a superscript there (the square of a numerator in an exponent) is set in
 * the size of its base, raised less than this share of it, against its base's right side.
 */
const SCRIPTSCRIPT_RISE = 0.6;

const hugsBase = (glyph: Glyph, glyphs: Glyph[], baseline: number, size: number) =>
  glyphs.some(
    (base) =>
      base !== glyph &&
      Math.abs(base.y - baseline) <= size * OFF_BASELINE &&
      base.right >= glyph.x - size * 0.15 &&
      base.right <= glyph.x + size * 0.1 &&
      /^[\p{L}\p{N})\]}|]$/u.test(base.text),
  );

/** TeX lowers a subscript at most about 0.4 em (with a superscript over it); this share of the size is far below that. */
const SUBSCRIPT_DROP = 0.75;

/** A gap after a comma wider than this share of the size is TeX's \\qquad (2 em) between two equations. */
const QQUAD = 1.5;

/** Stacks of glyphs above and below the line over the same x stretch: fractions. */
function stacksOf(above: Glyph[], below: Glyph[], small: Glyph[], baseline: number, size: number) {
  const stacks: { x: number; right: number; top: Glyph[]; bottom: Glyph[] }[] = [];
  const clusters = (list: Glyph[]) => {
    const sorted = [...list].sort((a, b) => a.x - b.x);
    const out: Glyph[][] = [];
    for (const glyph of sorted) {
      const last = out.at(-1);
      if (last && glyph.x - Math.max(...last.map((entry) => entry.right)) < size * 0.6) last.push(glyph);
      else out.push([glyph]);
    }
    return out;
  };
  const tops = clusters(above);
  const bottoms = clusters(below);
  for (const top of tops) {
    const x = Math.min(...top.map((glyph) => glyph.x));
    const right = Math.max(...top.map((glyph) => glyph.right));
    const bottom = bottoms.find(
      (candidate) => Math.min(...candidate.map((glyph) => glyph.x)) < right && Math.max(...candidate.map((glyph) => glyph.right)) > x,
    );
    if (!bottom) continue;
    const left = Math.min(x, ...bottom.map((glyph) => glyph.x));
    const end = Math.max(right, ...bottom.map((glyph) => glyph.right));
    // the small glyphs riding on the numerator or denominator (an index, an exponent) belong to them
    const riders = (part: Glyph[]) => {
      const level = part[0]!.y;
      return small.filter(
        (glyph) =>
          glyph.x >= left - 1 &&
          glyph.x <= end + size * 0.5 &&
          Math.abs(glyph.y - level) <= size * 0.6 &&
          Math.sign(glyph.y - baseline) === Math.sign(level - baseline),
      );
    };
    stacks.push({ x: left, right: end, top: [...top, ...riders(top)], bottom: [...bottom, ...riders(bottom)] });
  }
  return stacks;
}

function scriptsTex(atom: Atom, bars: MathBar[], barred: boolean): string | undefined {
  let out = '';
  for (const [mark, list] of [
    ['_', atom.sub],
    ['^', atom.sup],
  ] as const) {
    if (list.length === 0) continue;
    // a big operator's limit on lines of its own, one under another (\\substack{i, j = 1 \\\\ i \\neq j})
    const lines = atom.base && BIG_OPERATORS.has(atom.base.text) ? limitLines(list) : [list];
    const read = lines.map((line) => row(line, bars, barred));
    if (read.some((tex) => tex === undefined)) return undefined;
    const inner = lines.length > 1 ? `\\substack{${read.join('\\\\')}}` : read[0]!;
    if (mark === '^' && /^'+$/.test(inner)) out += inner;
    else out += `${mark}{${inner}}`;
  }
  return out;
}

/** A limit's glyphs by line: baselines more than half a line apart, top first, each line with the scripts of its own glyphs. */
function limitLines(glyphs: Glyph[]): Glyph[][] {
  const size = Math.max(...glyphs.map((glyph) => glyph.size));
  const lines: Glyph[][] = [];
  for (const glyph of [...glyphs].sort((a, b) => b.y - a.y)) {
    const line = lines.find((list) => Math.abs(list[0]!.y - glyph.y) < size * 0.5);
    if (line) line.push(glyph);
    else lines.push([glyph]);
  }
  // a line of only smaller glyphs is the scripts of the line beside it, not a line of the limit
  return lines.length > 1 && lines.every((line) => line.some((glyph) => glyph.size >= size * SCRIPT_SIZE)) ? lines : [glyphs];
}

/** Relations, operators and openings: TeX gives them no scripts in running text, so small glyphs over and under one are something else. */
const SCRIPTLESS = /^[=<>≤≥≠≈≡∼+−\-×·⋅∈∉⊆⊂⊇⊃→⇒⇔↦(,]$/u;

/**
 * Small glyphs raised and lowered over the same stretch after a relation or operator: a fraction set in text style
 * (α₁ ≤ ½α drawn as a small α over a small 2), whose bar an inline formula does not read. Undefined when the atom's
 * small glyphs are not one such stack.
 */
function smallFraction(atom: Atom, bars: MathBar[], barred: boolean): string | undefined {
  if (atom.sup.length === 0 || atom.sub.length === 0) return undefined;
  const span = (list: Glyph[]) => [Math.min(...list.map((glyph) => glyph.x)), Math.max(...list.map((glyph) => glyph.right))] as const;
  const [topLeft, topRight] = span(atom.sup);
  const [bottomLeft, bottomRight] = span(atom.sub);
  if (topRight <= bottomLeft || bottomRight <= topLeft) return undefined;
  const top = row(atom.sup, bars, barred);
  const bottom = row(atom.sub, bars, barred);
  return top && bottom ? `\\frac{${top}}{${bottom}}` : undefined;
}

/** A long arrow with its labels: \xRightarrow[under]{over}, or \Longrightarrow when it has none. */
function arrowTex(atom: Atom, labelled: string, bars: MathBar[], barred: boolean): string | undefined {
  if (atom.sup.length === 0 && atom.sub.length === 0) return atom.tex;
  const over = row(atom.sup, bars, barred);
  const under = row(atom.sub, bars, barred);
  if (over === undefined || under === undefined) return undefined;
  return `${labelled}${under ? `[${under}]` : ''}{${over}}`;
}

function glyphTex(glyph: Glyph): string | undefined {
  // a letter with an accent, as the text layer put it on (é composed; ≠ decomposes too, but is a symbol of its own)
  const accented = accentedTex(glyph.text, (letter) => glyphTex({ ...glyph, text: letter }));
  if (accented !== undefined) return accented ?? undefined;
  const char = glyph.text;
  if (/^[A-Za-z]$/.test(char)) return glyph.alphabet ? `\\${glyph.alphabet}{${char}}` : glyph.bold ? `\\mathbf{${char}}` : char;
  if (/^\d$/.test(char)) return glyph.bold ? `\\mathbf{${char}}` : char;
  const symbol = SYMBOLS[char];
  if (symbol !== undefined) {
    if (glyph.bold && /^\\[a-zA-Z]+$/.test(symbol) && /[\u0370-\u03ff]/u.test(char)) return `\\boldsymbol{${symbol}}`;
    return symbol;
  }
  if (/^[+\-=<>()[\],.;:!|/*]$/.test(char)) return char;
  if (char === '{' || char === '}') return `\\${char}`;
  return undefined;
}

/** Operator names TeX sets limits under in display, as their words are spelled (two words a thin space apart). */
const LIMIT_NAMES: Record<string, string> = {
  lim: '\\lim',
  max: '\\max',
  min: '\\min',
  sup: '\\sup',
  inf: '\\inf',
  det: '\\det',
  gcd: '\\gcd',
  Pr: '\\Pr',
  'lim sup': '\\limsup',
  'lim inf': '\\liminf',
  'arg max': '\\operatorname*{arg\\,max}',
  'arg min': '\\operatorname*{arg\\,min}',
};
/** Between the words of one name TeX puts a thin space; a wider gap is a word of its own. */
const NAME_WORD_GAP = 0.3;

/** The words of a name, split where a gap wider than kerning stands between letters. */
function nameWords(word: Glyph[], size: number): string {
  return word.map((glyph, index) => (index > 0 && glyph.x - word[index - 1]!.right > size * NAME_GAP ? ' ' : '') + glyph.text).join('');
}

/**
 * Runs of upright letters (with no other atom between) that spell an
 * operator name taking limits, one or two words: the glyphs of each.
 */
function limitNames(atoms: Atom[], size: number): Glyph[][] {
  const names: Glyph[][] = [];
  let run: Glyph[] = [];
  const flush = () => {
    // a run may hold a name and more ("lim" then "x" set upright): the longest name the run starts with, and again
    // after it (\min_{\theta}\max_{\phi}: two names a thin space apart)
    let found = true;
    while (found && run.length > 0) {
      found = false;
      for (let end = run.length; end > 0; end--) {
        const part = run.slice(0, end);
        if (LIMIT_NAMES[nameWords(part, size)] !== undefined && (end === run.length || run[end]!.x - run[end - 1]!.right > size * NAME_GAP)) {
          names.push(part);
          run = run.slice(end);
          found = true;
          break;
        }
      }
    }
    run = [];
  };
  for (const atom of atoms) {
    const glyph = atom.base;
    const upright = glyph && /^\p{Script=Latin}$/u.test(glyph.text) && !glyph.italic && !glyph.bold && !glyph.alphabet;
    if (!upright) {
      flush();
      continue;
    }
    const previous = run.at(-1);
    if (previous && glyph.x - previous.right > size * NAME_WORD_GAP) flush();
    run.push(glyph);
  }
  flush();
  return names;
}

function wordTex(word: Glyph[], size: number): string {
  const limitName = LIMIT_NAMES[nameWords(word, size)];
  if (limitName !== undefined) return limitName;
  const name = word.map((glyph) => glyph.text).join('');
  if (name.length === 1) return name;
  if (FUNCTIONS.has(name)) return `\\${name}`;
  if (CONDITION_WORDS.has(name)) return `\\text{ ${name} }`;
  // a word with letters beyond ASCII ("für" of a condition) is text: TeX's operator names are ASCII, and KaTeX warns of
  // accented letters in math
  return /^[A-Za-z]+$/.test(name) ? `\\operatorname{${name}}` : `\\text{ ${name} }`;
}

/** Joins pieces, with a space only where a command name would run into a letter. */
function joinTex(parts: string[]): string {
  let out = '';
  for (const part of parts) {
    if (/\\[a-zA-Z]+$/.test(out) && /^[a-zA-Z]/.test(part)) out += ' ';
    out += part;
  }
  return out;
}

/**
 * TeX a formula's layout was misread into: a script on nothing (at a group's
 * start) or on an operator, a relation or an opening bracket, which a formula
 * set by TeX does not have. Glyph positions guessed inside a run of text, a
 * diagram's labels taken for a formula, end so; no TeX is better than that.
 */
export function misread(tex: string): boolean {
  return /(^|[{=+\-(,<>])\s*[_^]/.test(tex);
}

/** What reading TeX from a page's glyphs needs: a run's glyphs as drawn, and whether KaTeX reads a TeX. */
export type GlyphReader = { glyphsOf: (item: TextItem) => MathGlyph[]; readable: (tex: string) => boolean };

/**
 * A reader of the page's glyphs: each where the operator list draws it (when it is given), else the run's width shared
 * among its glyphs, with its font's style. `drawing.frame` puts the drawn glyphs where the layout's text is (page-frame.ts).
 */
export async function glyphReader(page: PDFPageProxy, drawing: { list: OperatorList | null; frame?: PageFrame } = { list: null }): Promise<GlyphReader> {
  const { list, frame } = drawing;
  // by line (a point's band), so a run looks among its own line's glyphs, not the page's
  const drawn = new Map<number, PlacedGlyph[]>();
  for (const drawnGlyph of list ? pageGlyphPositions(page, list) : []) {
    const glyph = frame ? { ...drawnGlyph, ...frame.point(drawnGlyph.x, drawnGlyph.y) } : drawnGlyph;
    const band = Math.round(glyph.y);
    if (drawn.has(band)) drawn.get(band)!.push(glyph);
    else drawn.set(band, [glyph]);
  }
  const { default: katex } = await import('katex');
  const readable = (tex: string) => {
    try {
      katex.renderToString(tex, { throwOnError: true, output: 'mathml' });
      return true;
    } catch {
      return false;
    }
  };
  const styles = new Map<string, ReturnType<typeof fontStyle>>();
  const styleOf = (font: string) => {
    if (!styles.has(font)) styles.set(font, fontStyle(page.commonObjs.has(font) ? (page.commonObjs.get(font) as { name?: string } | null)?.name : undefined));
    return styles.get(font)!;
  };
  const glyphsOf = (item: TextItem): MathGlyph[] => {
    const tall = item.reach !== undefined && item.reach.top - item.reach.bottom >= item.size * TALL;
    return (placedGlyphs(item, drawn) ?? [item]).map((glyph) => ({
      text: glyph.text,
      x: glyph.x,
      y: glyph.y,
      width: glyph.width,
      size: item.size,
      ...styleOf(glyph.font),
      ...(tall ? { tall } : {}),
    }));
  };
  return { glyphsOf, readable };
}

/**
 * The display formulas of a laid-out page get their TeX read again from
 * their glyphs' positions and fonts: scripts, stacked fractions, limits, bold
 * vectors and operator names the line's text alone cannot show. Kept only
 * when KaTeX reads it; otherwise the TeX from the text stays. `items` are in
 * the layout's page space.
 */
export function readFormulaTex(
  blocks: Block[],
  anchors: Map<Block, BlockAnchor>,
  items: TextItem[],
  rules: Rule[],
  { glyphsOf: glyphOf, readable }: GlyphReader,
): void {
  if (!blocks.some((block) => block.kind === 'formula')) return;
  const lines = new Map<Block, FormulaLine>();
  for (const block of blocks) {
    const anchor = anchors.get(block);
    if (block.kind !== 'formula' || !anchor) continue;
    if (anchor.bottom !== undefined) {
      // a formula over several lines: every glyph and bar in its area
      const { x, right, top, bottom } = { ...anchor, bottom: anchor.bottom };
      const inside = (px: number, py: number) => px >= x - 1 && px <= right + 1 && py >= bottom - 1 && py <= top + 1;
      // a run is in the area where the middle of its letters is: a line's small script whose baseline grazes the area's
      // top (the area reaches a size over its top line's baseline) stands above it
      const glyphs = items.filter((item) => !item.artifact && inside(item.x + item.width / 2, item.y + item.size * X_HEIGHT_MIDDLE)).flatMap(glyphOf);
      const bars = rules
        .filter((rule) => rule.y1 === rule.y2 && inside(rule.x1, rule.y1) && inside(rule.x2, rule.y1))
        .map((rule) => ({ x1: rule.x1, x2: rule.x2, y: rule.y1 }));
      const tex = layoutToTex(glyphs, bars);
      if (tex && !misread(tex) && readable(tex)) block.tex = withTag(tex, block.tag);
      continue;
    }
    const near = items.filter(
      (item) => !item.artifact && item.x >= anchor.x - 1 && item.x <= anchor.right + 1 && item.y <= anchor.top && item.y >= anchor.top - 40,
    );
    if (near.length === 0) continue;
    const size = Math.max(...near.map((item) => item.size));
    const baseline = anchor.top - size;
    const glyphs = near.filter((item) => item.y >= baseline - size * 0.8 && item.y <= baseline + size * 0.9).flatMap(glyphOf);
    const tex = layoutToTex(glyphs);
    // KaTeX cannot read it: the TeX from the text stays
    if (tex && !misread(tex) && readable(tex)) {
      block.tex = withTag(tex, block.tag);
      const line = glyphs.filter((glyph) => glyph.size >= size * SCRIPT_SIZE && Math.abs(glyph.y - baseline) <= size * OFF_BASELINE);
      const equals = line.filter((glyph) => ALIGNING.test(glyph.text)).sort((a, b) => a.x - b.x)[0];
      if (equals) lines.set(block, { equals: equals.x, baseline: equals.y, size, tex });
    }
  }
  alignRows(blocks, lines, readable);
}

type FormulaLine = { equals: number; baseline: number; size: number; tex: string };

/**
 * Display formulas on consecutive lines whose first = stand one under
 * another are one aligned formula (TeX's align: each line's left side set
 * flush right against its =, a continued line's left side empty): one
 * block, \begin{aligned}…&=…\\&=…\end{aligned}, which a screen reader reads as
 * one derivation rather than a formula and a stray "= …". `lines` holds
 * the single-line formulas whose TeX was read from their glyphs, with where
 * their first = stands.
 */
function alignRows(blocks: Block[], lines: Map<Block, FormulaLine>, readable: (tex: string) => boolean): void {
  for (let index = 0; index < blocks.length; index++) {
    const first = blocks[index]!;
    const head = lines.get(first);
    // a numbered line is an equation of its own
    if (first.kind !== 'formula' || !head || first.tag) continue;
    const rows = [head];
    let next = index + 1;
    for (; next < blocks.length; next++) {
      const candidate = blocks[next]!;
      const row = candidate.kind === 'formula' && candidate.tag ? undefined : lines.get(candidate);
      const above = rows.at(-1)!;
      // the next line down, at most a display line's pitch under, its = within a tenth of an em of the others'
      const gap = above.baseline - (row?.baseline ?? Number.NaN);
      if (!row || !(gap > 0 && gap <= above.size * 2.5) || Math.abs(row.equals - head.equals) > Math.max(1, head.size * 0.1)) break;
      rows.push(row);
    }
    if (rows.length < 2) continue;
    const split = rows.map((row) => splitAtRelation(row.tex));
    if (split.some((parts) => parts === undefined)) continue;
    const tex = `\\begin{aligned}${split.map((parts) => `${parts![0]}&${parts![1]}`).join('\\\\')}\\end{aligned}`;
    if (!readable(tex)) continue;
    const merged = blocks.slice(index, next);
    first.text = merged.map((block) => (block.kind === 'formula' ? block.text : '')).join(' ');
    first.tex = tex;
    blocks.splice(index + 1, next - index - 1);
  }
}

/** A formula's TeX parted at its first relation outside braces (=, <, \\leq, \\approx…): the left side, and the rest from the relation on. */
function splitAtRelation(tex: string): [string, string] | undefined {
  let depth = 0;
  for (let at = 0; at < tex.length; at++) {
    const char = tex[at]!;
    if (char === '{') depth++;
    else if (char === '}') depth--;
    else if (depth === 0 && (/[=<>]/.test(char) || RELATION_COMMAND.test(tex.slice(at)))) return [tex.slice(0, at), tex.slice(at)];
    else if (char === '\\') at += (/^\\[A-Za-z]+/.exec(tex.slice(at))?.[0].length ?? 2) - 1;
  }
  return undefined;
}

/** Relations a derivation's lines align at (an arrow opening each line is a step, not an alignment). */
const ALIGNING = /^[=<>≤≥≠≈≡≅∼∝⊂⊆⊃⊇∈]$/u;

const RELATION_COMMAND = /^\\(?:leq?|geq?|neq|ne|approx|equiv|sim|simeq|cong|subseteq?|supseteq?|subset|supset|in|ll|gg|propto)(?![A-Za-z])/;

/**
 * The glyphs the operator list draws for a text run: those starting within
 * the run, on its baseline, that spell its text in drawing order (a glyph
 * drawn over another, as pdfTeX draws ↦ from a bar and an arrow, belongs to
 * the run that spells it). Undefined when they do not spell it all.
 */
function placedGlyphs(item: TextItem, drawn: Map<number, PlacedGlyph[]>): PlacedGlyph[] | undefined {
  let rest = item.text.replace(/\s|\u200b/g, '');
  if (drawn.size === 0 || rest === '') return undefined;
  const band = Math.round(item.y);
  // a run's glyphs share its baseline, so they are in one band (the run's own, or one beside it when near an edge), in drawing order
  const candidates = [...(drawn.get(band - 1) ?? []), ...(drawn.get(band) ?? []), ...(drawn.get(band + 1) ?? [])];
  const out: PlacedGlyph[] = [];
  for (const glyph of candidates) {
    if (Math.abs(glyph.y - item.y) > item.size * 0.05 || glyph.x < item.x - 0.5 || glyph.x > item.x + item.width + 0.5) continue;
    // the run's own characters are kept: pdf.js spells a ligature's glyph in letters ("ﬁ" as "fi")
    const text = [glyph.text, glyph.text.normalize('NFKC')]
      .map((spelling) => spelling.replace(/\s/g, ''))
      .find((spelling) => spelling !== '' && rest.startsWith(spelling));
    if (text === undefined) continue;
    out.push({ ...glyph, text });
    rest = rest.slice(text.length);
    if (rest === '') return out;
  }
  return undefined;
}
