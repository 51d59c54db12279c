import { BoundedCache } from '../../bounded-cache.ts';
import type { Run } from './inline.ts';
import { type GlyphReader, layoutToTex, type MathBar, type MathGlyph, misread } from './math-layout.ts';
import type { Segment } from './segments.ts';
import { isOperatorName } from './tex.ts';
import type { TextItem } from './text-layer.ts';

/**
 * Mathematics inside a line of prose ("let $u \in H^1_0(\Omega)$ be…"), read
 * as TeX from its glyphs: a stretch of the line's words set in TeX's math
 * faces (math italic, symbols, extension, the AMS and alphabet fonts), with
 * what stands between and around them in the text face (digits, operators,
 * brackets, upright Greek, operator names), becomes one run carrying its TeX.
 * The words around it stay text, and so does a stretch whose TeX KaTeX
 * cannot read. The segment's text is not changed: only its runs say where
 * the mathematics is.
 */

/** A word of the text face that is mathematics beside a math face's: digits, upright Greek, operators, brackets, primes. */
const MATHY = /^[\p{Script=Greek}\p{N}()[\]{}|‖+\-−=<>≤≥∞∂∇′'*/·⋅×∘!]+$/u;
/** Characters of a stretch past which it is left as text (a line of a hostile page may hold thousands of math glyphs). */
const MAX_STRETCH = 400;

/**
 * A contents line's leader: dots, spaced or not. TeX draws them in math mode (texinfo's and LaTeX's \dotfill), so
 * they come in a math face, but they are no mathematics ("1 Introduction . . . . 1" is no $\ldots\ldots\mathbf{1}$).
 */
const LEADER = /^(\s*[.·]){4,}\s*$/;

/** Whether the item is set in a math face as mathematics (a leader is text, whatever face it is set in). */
const inMathFace = (item: TextItem, mathFonts: Set<string>) => mathFonts.has(item.font) && !LEADER.test(item.text);

/** Punctuation that closes the sentence or clause a stretch stands in, not the stretch. */
const TRAILING = /[.,;:]+$/;

type Char = { char: string; run: number; item: TextItem | undefined; offset: number; math: boolean; script?: 'sup' | 'sub' };

export function markInlineMath(
  segments: Segment[],
  mathFonts: Set<string>,
  reader: GlyphReader,
  bars: MathBar[] = [],
  italicFonts: Set<string> = new Set(),
  boldFonts: Set<string> = new Set(),
): void {
  for (const segment of segments) {
    const items = segment.items;
    // a line with mathematics: a math face's glyphs, or glyphs raised and lowered beside each other (a fraction in the text face)
    // (or a letter of an italic face standing alone, with Times: "O(n log n)")
    const mathematical =
      items?.some((item) => inMathFace(item, mathFonts) || (italicFonts.has(item.font) && /(?<!\p{L})\p{L}(?!\p{L})/u.test(item.text))) ||
      (segment.runs.some((run) => run.sup) && segment.runs.some((run) => run.sub));
    if (!items || items.length !== segment.runs.length || segment.rotated || !mathematical) continue;
    const runs = withMath(segment.runs, items, mathFonts, reader, bars, italicFonts, boldFonts);
    if (runs) segment.runs = runs;
  }
}

/** The runs with each stretch of mathematics one run carrying its TeX; undefined when the line has none to read. */
function withMath(
  runs: Run[],
  items: TextItem[],
  mathFonts: Set<string>,
  reader: GlyphReader,
  bars: MathBar[],
  italicFonts: Set<string>,
  boldFonts: Set<string>,
): Run[] | undefined {
  // the line character by character, each knowing its run and, past the space a run may open with, its item's offset
  const chars: Char[] = [];
  runs.forEach((run, index) => {
    const item = items[index]!;
    const lead = run.text.length - item.text.length;
    const mathFace = inMathFace(item, mathFonts);
    // by UTF-16 unit, as the item's text is sliced (a math alphanumeric's two halves stay side by side)
    for (let at = 0; at < run.text.length; at++) {
      const char = run.text[at]!;
      const offset = at - lead;
      chars.push({
        char,
        run: index,
        item: offset >= 0 ? item : undefined,
        offset,
        math: offset >= 0 && mathFace && char.trim() !== '',
        ...(run.sup ? { script: 'sup' as const } : run.sub ? { script: 'sub' as const } : {}),
      });
    }
  });
  italicVariables(chars, italicFonts, boldFonts);
  noteMarks(chars);
  const stretches = stretchesOf(chars);
  if (stretches.length === 0) return undefined;
  const out: Run[] = [];
  let at = 0;
  const copyText = (from: number, to: number) => {
    for (let index = from; index < to; ) {
      const run = chars[index]!.run;
      let end = index;
      while (end < to && chars[end]!.run === run) end++;
      out.push({
        ...runs[run]!,
        text: chars
          .slice(index, end)
          .map((entry) => entry.char)
          .join(''),
      });
      index = end;
    }
  };
  let found = false;
  for (const [from, to] of stretches) {
    const tex = stretchTex(chars.slice(from, to), reader, bars);
    if (!tex) continue;
    copyText(at, from);
    const { href } = runs[chars[from]!.run]!;
    out.push({
      text: chars
        .slice(from, to)
        .map((entry) => entry.char)
        .join(''),
      math: tex,
      ...(href ? { href } : {}),
    });
    at = to;
    found = true;
  }
  if (!found) return undefined;
  copyText(at, chars.length);
  return out;
}

/**
 * Letters standing alone in an italic face are variables where the page sets its symbols in TeX's math faces: with
 * Times (mathptmx) the variables are the text italic's, and "x" of "x ∈ ℝⁿ" is as much the formula's as "∈". A word
 * counts when each of its runs of letters on the line (its scripts aside) is one italic letter or an operator name:
 * "x", "O(n", "det(A", "Hk(X;" (H with its script k); an italic word is emphasis.
 */
function italicVariables(chars: Char[], italicFonts: Set<string>, boldFonts: Set<string> = new Set()): void {
  if (italicFonts.size === 0) return;
  const inFont = (fonts: Set<string>) => (entry: Char) => entry.item !== undefined && fonts.has(entry.item.font);
  const italic = inFont(italicFonts);
  const bold = inFont(boldFonts);
  const words = wordsOf(chars).map(([from, to]) => chars.slice(from, to));
  const runsByWord = new Map(words.map((word) => [word, runsOf(word)]));
  // a word whose runs of letters are each one letter of the given kind or an operator name: its letters are variables
  const lettersOf = (word: Char[], kind: (entry: Char) => boolean): Char[] | undefined => {
    const runs = runsByWord.get(word)!;
    const variables = runs.filter((letters) => letters.length === 1 && kind(letters[0]!));
    const named = (letters: Char[]) => isOperatorName(letters.map((entry) => entry.char).join(''));
    if (variables.length === 0 || !runs.every((letters) => variables.includes(letters) || named(letters))) return undefined;
    // with their scripts ("pk" of p_k)
    return word.filter((entry) => /\p{L}/u.test(entry.char) && kind(entry));
  };
  for (const word of words) for (const entry of lettersOf(word, italic) ?? []) entry.math = true;
  // a bold letter standing alone is a vector only beside mathematics (\mathbf{W}x, "y = …"): alone, it is as often a
  // run-in heading's "a)"
  for (const [index, word] of words.entries()) {
    const letters = lettersOf(word, (entry) => bold(entry) || italic(entry));
    const beside = [words[index - 1], words[index + 1]].some(
      (other) =>
        other !== undefined &&
        (other.some((entry) => entry.math && !/[()[\]{}]/.test(entry.char)) || /^[=<>≤≥+\-−×·∈]$/u.test(other.map((entry) => entry.char).join(''))),
    );
    if (letters && (beside || word.some((entry) => entry.math))) for (const entry of letters) entry.math = true;
  }
}

/** Marks of a note or an affiliation, which TeX sets from its symbol font: ∗ † ‡ § ¶ ⋆ ★ ⋄ ♮ ♯ ♭. */
const NOTE_MARK = /^[∗*†‡§¶⋆★⋄♮♯♭]$/u;

/**
 * A word of the text face with marks raised after it ("Gal∗+", "Smith†,1") names a note or an affiliation: the marks
 * come from TeX's symbol font, but they are no mathematics, and the word stays text with its marks raised.
 */
function noteMarks(chars: Char[]): void {
  for (const [from, to] of wordsOf(chars)) {
    const word = chars.slice(from, to);
    const marks = word.filter((entry) => entry.math);
    if (marks.length === 0) continue;
    // set above the word's first character, as a script
    const first = word.find((other) => other.item !== undefined)?.item;
    const raised = (entry: Char) => entry.script === 'sup' || (first !== undefined && entry.item !== undefined && entry.item.y - first.y > first.size * 0.2);
    if (!marks.every((entry) => NOTE_MARK.test(entry.char) && raised(entry))) continue;
    // the word itself: two letters or more of the text face, before its marks
    const base = word.slice(0, word.indexOf(marks[0]!));
    if (base.filter((entry) => /\p{L}/u.test(entry.char) && !entry.math && !raised(entry)).length < 2) continue;
    for (const entry of marks) entry.math = false;
  }
}

/** A word's runs of letters on its line: a script (raised or lowered from the word's first letter) and a change of face part them. */
function runsOf(word: Char[]): Char[][] {
  const first = word.find((entry) => entry.item !== undefined);
  // (Times' scripts may come near the body's size, unmarked by the line)
  const scripted = (entry: Char) =>
    entry.script !== undefined || (first?.item !== undefined && entry.item !== undefined && Math.abs(entry.item.y - first.item.y) > first.item.size * 0.2);
  const runs: Char[][] = [];
  let run: Char[] = [];
  for (const entry of word) {
    const letter = /\p{L}/u.test(entry.char);
    if (letter && scripted(entry)) continue;
    if (letter && run.length > 0 && run.at(-1)!.item?.font !== entry.item?.font) {
      runs.push(run);
      run = [];
    }
    if (letter) run.push(entry);
    else if (run.length > 0) {
      runs.push(run);
      run = [];
    }
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** A line's words, as [from, to) character ranges between spaces. */
function wordsOf(chars: Char[]): [number, number][] {
  const words: [number, number][] = [];
  for (let index = 0; index < chars.length; ) {
    if (chars[index]!.char.trim() === '') {
      index++;
      continue;
    }
    let end = index;
    while (end < chars.length && chars[end]!.char.trim() !== '') end++;
    words.push([index, end]);
    index = end;
  }
  return words;
}

/**
 * The stretches of mathematics in a line, as [from, to) character ranges: runs of words, each in a math face in part
 * or a word of the text face that is mathematics (MATHY, an operator name), with at least one in a math face; a
 * stretch ends before the punctuation that closes its clause.
 */
function stretchesOf(chars: Char[]): [number, number][] {
  const words = wordsOf(chars);
  const stretches: [number, number][] = [];
  let open: [number, number] | undefined;
  // where the stretch ends without a colon standing alone after its last formula word ("f : X → Y" keeps it inside)
  let end = 0;
  let hasMath = false;
  const close = () => {
    if (open && hasMath) stretches.push(trimmed(chars, open[0], end));
    open = undefined;
    hasMath = false;
  };
  const wordText = (word: [number, number] | undefined) =>
    word
      ? chars
          .slice(word[0], word[1])
          .map((entry) => entry.char)
          .join('')
      : '';
  for (const [index, [from, to]] of words.entries()) {
    const word = chars.slice(from, to);
    const text = word.map((entry) => entry.char).join('');
    if (open && text === ':') continue;
    const math = word.some((entry) => entry.math && !BRACKET.test(entry.char));
    // the clause's punctuation after a word set in the text face is the sentence's, not the formula's
    // (a list's dots inside a stretch are the formula's, but for a comma after them)
    // (three periods set apart, or an ellipsis: one period alone is a sentence's end)
    const dotted = (at: number) => DOTS.test(wordText(words[at]));
    const dots = open !== undefined && dotted(index) && (/[.…⋯·]{2}|[…⋯]/u.test(text) || dotted(index - 1) || dotted(index + 1));
    const trailing = dots ? (text.endsWith(',') ? ',' : '') : word.at(-1)!.math ? '' : (TRAILING.exec(text)?.[0] ?? '');
    const core = text.slice(0, text.length - trailing.length);
    // an operator name with its script in the text face is one too (log₂)
    // digits raised and lowered in the text face, with nothing but them in the word, are a fraction set in the line (\tfrac{1}{2})
    const stacked = MATHY.test(core) && word.some((entry) => entry.script === 'sup') && word.some((entry) => entry.script === 'sub');
    // (an operator name may open a bracket: "(mod n)" of \pmod)
    // a comma before a list's dots, or after them before the list's last term ("x₁, …, xₙ")
    const next = words[index + 1];
    const nextIsMath = next !== undefined && chars.slice(next[0], next[1]).some((entry) => entry.math);
    const listed =
      trailing === ',' && ((dotted(index + 1) && dotted(index + 2)) || ((dots || (open !== undefined && text === ',' && dotted(index - 1))) && nextIsMath));
    const mathy =
      dots ||
      (listed && open !== undefined) ||
      (core !== '' &&
        (math ||
          stacked ||
          MATHY.test(core) ||
          (DECIMAL.test(core) && !word.some((entry) => entry.script)) ||
          isOperatorName(core.replace(/^[([{]+/u, '').replace(/\p{N}+$/u, ''))));
    if (!mathy) {
      close();
      continue;
    }
    open = [open?.[0] ?? from, to - trailing.length];
    end = open[1];
    hasMath ||= math || stacked;
    // inside a bracket the punctuation is the formula's: H^k(X; \mathbb{Z}) and ⟨u, v⟩; so is a comma before the dots
    // of a list, where the comma is the text face's (Palatino's, Times': "x₁, …, xₙ")
    if (trailing && !listed && depth(chars.slice(open[0], end)) <= 0) close();
    else if (trailing) open = [open[0], to];
  }
  close();
  return stretches;
}

const BRACKET = /[()[\]{}]/;
/** The dots of a list (\\dots), one word or three. */
const DOTS = /^[.…⋯·]+,?$/u;
/** A number with its decimal point, set in the text face ("β₁ = 0.9"). */
const DECIMAL = /^[+\-−]?\p{N}+(?:[.,]\p{N}+)+$/u;

/** How many brackets are open at the end of the characters. */
const depth = (list: Char[]) => list.reduce((sum, entry) => sum + (/[([{⟨]/.test(entry.char) ? 1 : /[)\]}⟩]/.test(entry.char) ? -1 : 0), 0);

/** The stretch without the brackets that open at its end or close at its start, which the formula does not pair. */
function trimmed(chars: Char[], from: number, to: number): [number, number] {
  while (to > from && /[([{⟨]/.test(chars[to - 1]!.char) && depth(chars.slice(from, to)) > 0) to--;
  while (from < to && /[)\]}⟩]/.test(chars[from]!.char) && depth(chars.slice(from, to)) < 0) from++;
  while (to > from && chars[to - 1]!.char.trim() === '') to--;
  while (from < to && chars[from]!.char.trim() === '') from++;
  return [from, to];
}

/** TeX of a stretch, from its glyphs: whole runs as drawn, a run's part by its share of the run's width. */
function stretchTex(stretch: Char[], { glyphsOf }: GlyphReader, bars: MathBar[]): string | undefined {
  // the layout reader is quadratic in a formula's glyphs: no formula in a line of prose is longer than this
  if (stretch.length > MAX_STRETCH) return undefined;
  const glyphs: MathGlyph[] = [];
  for (let index = 0; index < stretch.length; ) {
    const { item } = stretch[index]!;
    let end = index;
    while (end < stretch.length && stretch[end]!.item === item) end++;
    if (item) {
      const from = stretch[index]!.offset;
      const to = stretch[end - 1]!.offset + 1;
      if (from === 0 && to >= item.text.length) glyphs.push(...glyphsOf(item));
      else {
        const [first] = glyphsOf(item);
        const step = item.width / Math.max(1, item.text.length);
        glyphs.push({ ...first!, text: item.text.slice(from, to), x: item.x + step * from, y: item.y, width: step * (to - from), size: item.size });
      }
    }
    index = end;
  }
  // most stretches are one variable: its letter is its TeX
  const [only] = glyphs;
  if (glyphs.length === 1 && /^[A-Za-z]$/.test(only!.text) && !only!.bold && !only!.alphabet) return only!.text;
  // the bars over it: a root's, a fraction's in a line (\tfrac), an overline
  const left = Math.min(...glyphs.map((glyph) => glyph.x));
  const right = Math.max(...glyphs.map((glyph) => glyph.x + glyph.width));
  const low = Math.min(...glyphs.map((glyph) => glyph.y - glyph.size * 0.3));
  const high = Math.max(...glyphs.map((glyph) => glyph.y + glyph.size));
  const over = bars.filter((bar) => bar.x1 >= left - 1 && bar.x2 <= right + 1 && bar.y >= low && bar.y <= high);
  // prose names the same formulas again and again ("f(x)", "x ∈ X"): each layout, relative to its first glyph and in
  // hundredths of its size, is read once. The layout read is of those snapped places, so a formula reads the same
  // whichever of its near twins a worker met first.
  const [x0, y0, size] = [glyphs[0]!.x, glyphs[0]!.y, glyphs[0]!.size || 1];
  const snap = (value: number) => (Math.round((value / size) * 100) * size) / 100;
  const placed = glyphs.map((glyph) => ({ ...glyph, x: snap(glyph.x - x0), y: snap(glyph.y - y0), width: snap(glyph.width), size: snap(glyph.size) }));
  const placedBars = over.map((bar) => ({ x1: snap(bar.x1 - x0), x2: snap(bar.x2 - x0), y: snap(bar.y - y0) }));
  const key = [
    ...placed.map((glyph) => `${glyph.text} ${glyph.x} ${glyph.y} ${glyph.width} ${glyph.size} ${glyph.bold} ${glyph.italic} ${glyph.alphabet} ${glyph.tall}`),
    ...placedBars.map((bar) => `- ${bar.x1} ${bar.x2} ${bar.y}`),
  ].join('|');
  // not laid out by KaTeX here, a cost per formula of every line: the renderer keeps the text of TeX it cannot read
  return readTex.get(key, () => {
    const tex = layoutToTex(placed, placedBars);
    return tex && !misread(tex) ? tex : undefined;
  });
}

const readTex = new BoundedCache<string, string | undefined>(20_000);
