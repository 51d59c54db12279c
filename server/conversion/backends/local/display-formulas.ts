import { BoundedCache } from '../../bounded-cache.ts';
import type { Rule } from './drawing.ts';
import type { Segment } from './segments.ts';
import { CONDITION_WORDS, isOperatorName, looksLikeMath, RELATION } from './tex.ts';

/**
 * Display formulas set over several lines. A fraction's numerator and
 * denominator stand over and under a drawn bar, a big operator's limits
 * over and under the operator, each on a line of its own beside the
 * formula's main line; read line by line they scatter (the numerator joins
 * the paragraph above, "x =" stands alone, the denominator opens the next
 * paragraph). Found from their fraction bars, the pieces become one segment
 * spanning the formula's area, whose TeX is read again from its glyphs and
 * bars (readFormulaTex).
 */

/** The page area a display formula covers (page space, y up): its glyphs and bars are read from it. */
export type FormulaArea = { x: number; right: number; top: number; bottom: number };

/** A fraction bar is a thin line: LaTeX draws it 0.4 pt thick, KaTeX 0.04 em. */
const BAR_THICKNESS = 1.5;

/** A thin level rule: a fraction's bar, a root's or an overline. */
export const isFractionBar = (rule: Rule) => rule.y1 === rule.y2 && rule.width <= BAR_THICKNESS;

/** Big operators whose limits TeX sets over and under them in a display. */
const BIG_OPERATOR = /[∑∏∐⋃⋂⨁⨂∫∬∭∮]/u;
/** A delimiter this many sizes tall stands beside rows over and under its line (TeX's \\bigg is 2.4 em, its text lines 1.2 em apart). */
const TALL_DELIMITER = 2.2;
/**
 * An arrow drawn long from a shaft and a head (\\xrightarrow{f}, \\xRightarrow), a horizontal brace's tips
 * (\\underbrace{…}_{n}): the label stands on a line of its own over or under it.
 */
const LABELLED = /[−-]→|=⇒|[︷︸⏞⏟]/u;
const BRACE_TIPS = /[︷︸⏞⏟]/gu;
/** Operator names TeX sets limits under in a display, as big operators (lim over n → ∞, max over x). */
const LIMIT_NAME = /(?<!\p{L})(?:lim|max|min|sup|inf)(?!\p{L})/u;

/** Segments that a formula's pieces are, taken out of the flow and put back as one segment each, with the area it covers. */
export function takeDisplayFormulas(flow: Segment[], rules: Rule[]): { flow: Segment[]; areas: Map<Segment, FormulaArea> } {
  const areas = new Map<Segment, FormulaArea>();
  const bars = rules.filter(isFractionBar);
  // (a line whose every letter is in a math face has variables side by side, "πix", not words; a condition after the
  // formula, "= 0 for n > 1", is the formula's)
  const operators = flow.filter(
    (segment) => (BIG_OPERATOR.test(segment.text) || LIMIT_NAME.test(segment.text) || LABELLED.test(segment.text)) && (segment.mathLetters || !prose(segment)),
  );
  // a line with a delimiter as tall as rows over and under it: a matrix's, a column vector's, a case split's
  const tall = flow.filter((segment) => segment.reach && segment.reach.top - segment.reach.bottom >= segment.size * TALL_DELIMITER && !worded(segment));
  if (bars.length === 0 && operators.length === 0 && tall.length === 0) return { flow, areas };
  const taken = new Set<Segment>();
  const merged: Segment[] = [];
  const take = (area: ReturnType<typeof gather>, main: Segment[], axis: number) => {
    if (!area) return;
    for (const segment of area.members) taken.add(segment);
    const members = [...area.members].sort((a, b) => b.y - a.y || a.x - b.x);
    // a brace's tips are drawing, not text a reader should hear (the formula's TeX draws the brace)
    const text = members
      .map((segment) => segment.text)
      .join(' ')
      .replace(BRACE_TIPS, '')
      .replace(/\s+/g, ' ')
      .trim();
    const size = Math.max(...(main.length > 0 ? main : members).map((segment) => segment.size));
    const widest = [...members].sort((a, b) => b.text.length - a.text.length)[0]!;
    const segment: Segment = {
      x: area.x,
      right: area.right,
      y: main[0]?.y ?? axis - size * 0.25,
      size,
      font: widest.font,
      fonts: [...new Set(members.flatMap((member) => member.fonts ?? [member.font]))],
      text,
      runs: [{ text }],
      lines: [...new Set(members.map((member) => member.y))],
    };
    merged.push(segment);
    areas.set(segment, { x: area.x, right: area.right, top: area.top, bottom: area.bottom });
  };
  for (const bar of bars) {
    const area = fractionAt(bar, bars, flow, taken);
    // the line the bar's axis runs through is the formula's main line
    take(area, area ? [...area.members].filter((segment) => segment.y < bar.y1 && segment.y + segment.size * 0.7 > bar.y1) : [], bar.y1);
  }
  for (const operator of operators) {
    if (taken.has(operator)) continue;
    take(limitsOf(operator, bars, flow, taken), [operator], operator.y);
  }
  for (const line of tall) {
    if (taken.has(line)) continue;
    // a line ending in a big brace opens a case split: its rows may say their conditions in words ("0 falls x = y")
    const cases = /\{\s*$/.test(line.text) ? line.right : undefined;
    take(gather([line], { x: line.x, right: line.right }, bars, flow, taken, cases), [line], line.y);
  }
  if (merged.length === 0) return { flow, areas };
  const out = [...flow.filter((segment) => !taken.has(segment)), ...merged];
  out.sort((a, b) => b.y - a.y || a.x - b.x);
  return { flow: out, areas };
}

/**
 * A big operator's limits on lines of their own: smaller pieces of
 * mathematics just over and under the line that holds it, within its reach.
 */
function limitsOf(operator: Segment, bars: Rule[], flow: Segment[], taken: Set<Segment>) {
  const size = operator.size;
  // an arrow's or a brace's label is the nearest line's: between two rows of labelled arrows, it is the row's it is nearer
  const labelled = !BIG_OPERATOR.test(operator.text) && !LIMIT_NAME.test(operator.text);
  const nearerOther = (segment: Segment) =>
    flow.some(
      (other) =>
        other !== operator &&
        other.size >= size * 0.85 &&
        other.x < segment.right &&
        other.right > segment.x &&
        Math.abs(other.y - segment.y) < Math.abs(operator.y - segment.y),
    );
  const limit = (segment: Segment) =>
    segment !== operator &&
    !taken.has(segment) &&
    !worded(segment) &&
    segment.size < size * 0.85 &&
    segment.right >= operator.x - size &&
    segment.x <= operator.right + size &&
    !(labelled && nearerOther(segment));
  const limits = flow.filter(limit);
  const above = stacked(
    limits.filter((segment) => segment.y - operator.y > size * 0.5 && segment.y - operator.y <= size * 1.8),
    limits,
    1,
  );
  const below = stacked(
    limits.filter((segment) => operator.y - segment.y > size * 0.5 && operator.y - segment.y <= size * 1.8),
    limits,
    -1,
  );
  if (above.length + below.length === 0) return undefined;
  const members = [operator, ...above, ...below];
  const area = gather(
    members,
    { x: Math.min(...members.map((segment) => segment.x)), right: Math.max(...members.map((segment) => segment.right)) },
    bars,
    flow,
    taken,
  );
  // an operator with nothing beside it to sum is a lone symbol, not a display formula we can read
  const summand = (segment: Segment) =>
    segment.size >= size * 0.85 &&
    (segment !== operator || segment.text.replace(BIG_OPERATOR, '').replace(LIMIT_NAME, '').replace(BRACE_TIPS, '').trim() !== '');
  return area && [...area.members].some(summand) ? area : undefined;
}

/**
 * A limit's further lines (\\substack: "i, j = 1" over "i ≠ j"), each a script line's pitch beyond the last and
 * under or over it, `direction` 1 upwards and -1 downwards.
 */
function stacked(first: Segment[], candidates: Segment[], direction: 1 | -1): Segment[] {
  const out = [...first];
  for (let grown = out.length > 0; grown; ) {
    grown = false;
    const edge = direction === 1 ? Math.max(...out.map((segment) => segment.y)) : Math.min(...out.map((segment) => segment.y));
    const last = out.filter((segment) => segment.y === edge);
    const next = candidates.find(
      (segment) =>
        !out.includes(segment) &&
        (segment.y - edge) * direction > segment.size * 0.5 &&
        (segment.y - edge) * direction <= segment.size * 1.4 &&
        last.some((other) => segment.x < other.right && segment.right > other.x),
    );
    if (next) {
      out.push(next);
      grown = true;
    }
  }
  return out;
}

/** Pieces on one baseline set far apart: cells of a table's row over or under its rule, not a numerator or a denominator. */
function columned(segments: Segment[]): boolean {
  const sorted = [...segments].sort((a, b) => a.x - b.x);
  return sorted.some((segment, index) =>
    sorted.slice(0, index).some((other) => Math.abs(other.y - segment.y) < 1 && segment.x - other.right > segment.size * 2),
  );
}

/**
 * Words of three letters or more, save operator names and a function's name before its parenthesis
 * ("softmax(z)", "Attention(Q, K, V)"): a segment with one is prose, never a formula's piece.
 */
// asked of the same lines again and again as the gathering tries each bar and operator
const hasWords = (text: string) => wordy.get(text, () => (text.match(/\p{L}{3,}(?!\p{L}|\s?\()/gu) ?? []).some((word) => !isOperatorName(word)));
const wordy = new BoundedCache<string, boolean>(10_000);

/**
 * A display's line that ends in a condition TeX sets after \quad ("γ(t) = (…) für t ∈ [0, 2πr]", "= 0 for all x"):
 * mathematics with a relation, then at most four words. Its words are the formula's; a sentence's line starts
 * with words or has more of them.
 */
function endsInCondition(text: string): boolean {
  const first = [...text.matchAll(/\p{L}{3,}/gu)].find((match) => !isOperatorName(match[0]));
  if (!first) return false;
  return RELATION.test(text.slice(0, first.index)) && shortCondition(text.slice(first.index));
}

/** At most four words: a condition, not a sentence. */
const shortCondition = (text: string) => (text.match(/\p{L}{2,}/gu) ?? []).length <= 4;
/** Words a formula's piece may not hold: a condition at the end of its line is the formula's own. */
const prose = (segment: Segment) => worded(segment) && !endsInCondition(segment.text);
/** Words, unless every letter is in a math font: "∂wij" is ∂w with its subscript ij, "ezi" e to the z_i. */
const worded = (segment: Segment) => !segment.mathLetters && hasWords(segment.text);

/**
 * Where a segment's glyphs may reach above and below its baseline: its line
 * holds the small glyphs near it (a script, a nested fraction's numerator and
 * denominator, a limit), which stand higher and lower than its own text.
 */
const topOf = (segment: Segment) => Math.max(segment.y + segment.size, segment.reach?.top ?? Number.NEGATIVE_INFINITY);
const bottomOf = (segment: Segment) => Math.min(segment.y - segment.size * 0.6, segment.reach?.bottom ?? Number.POSITIVE_INFINITY);

/**
 * The formula a bar is the fraction bar of: a piece of mathematics just over
 * it and one just under it, each within its stretch (a table's rule has cells
 * across it and prose over it), grown to the pieces beside and around them
 * (the main line, other fractions, a sum's limits). Undefined when the bar is
 * no fraction bar or what it would gather is not mathematics.
 */
function fractionAt(bar: Rule, bars: Rule[], flow: Segment[], taken: Set<Segment>) {
  const within = (segment: Segment) =>
    !taken.has(segment) &&
    !worded(segment) &&
    segment.x >= bar.x1 - segment.size &&
    segment.right <= bar.x2 + segment.size &&
    (segment.x + segment.right) / 2 >= bar.x1 &&
    (segment.x + segment.right) / 2 <= bar.x2;
  const above = flow.filter((segment) => within(segment) && segment.y - bar.y1 > segment.size * 0.1 && segment.y - bar.y1 <= segment.size * 1.5);
  const below = flow.filter((segment) => within(segment) && bar.y1 - segment.y > segment.size * 0.3 && bar.y1 - segment.y <= segment.size * 2);
  if (above.length === 0 || below.length === 0 || columned(above) || columned(below)) return undefined;
  return gather([...above, ...below], { x: bar.x1, right: bar.x2 }, bars, flow, taken);
}

/** Two equations on a display's row, "a = b, \\qquad c = d": TeX's two quads and the spaces around the comma. */
const QQUAD_REACH = 3;

/** A piece holding a relation, on the baseline of a member that ends in a comma or a semicolon just left of it. */
const afterComma = (segment: Segment, members: Set<Segment>) =>
  RELATION.test(segment.text) &&
  [...members].some(
    (member) =>
      Math.abs(member.y - segment.y) < 1 && member.right <= segment.x && segment.x - member.right <= segment.size * QQUAD_REACH && /[,;]\s*$/.test(member.text),
  );

/**
 * A formula grown from its first pieces (a fraction's numerator and
 * denominator, an operator and its limits): the pieces level with them that
 * stand close beside, until none is left. Their height is the formula's: a
 * piece whose baseline lies outside it (the line above or below, an aligned
 * equation's next row) stays out however close. Undefined when what it
 * gathers is not mathematics.
 */
function gather(first: Segment[], stretch: { x: number; right: number }, bars: Rule[], flow: Segment[], taken: Set<Segment>, casesFrom?: number) {
  // a case split's row: right of its brace, mathematics first, then at most four words of condition
  const caseRow = (segment: Segment) =>
    casesFrom !== undefined && segment.x >= casesFrom - 1 && !/^\p{L}{3,}/u.test(segment.text) && shortCondition(segment.text);
  const excluded = (segment: Segment) => prose(segment) && !caseRow(segment);
  const members = new Set(first);
  const box = { ...stretch, top: Math.max(...first.map(topOf)), bottom: Math.min(...first.map(bottomOf)) };
  const core = { top: box.top, bottom: box.bottom };
  for (let grown = true; grown; ) {
    grown = false;
    for (const segment of flow) {
      if (members.has(segment) || taken.has(segment) || excluded(segment)) continue;
      // a case's condition stands a quad or two after its value
      const reach = segment.size * (caseRow(segment) ? QQUAD_REACH : 1.5);
      const beside =
        (segment.x <= box.right + reach && segment.right >= box.x - reach) ||
        (segment.x > box.right && segment.x <= box.right + segment.size * QQUAD_REACH && afterComma(segment, members));
      const level = segment.y >= core.bottom && segment.y <= core.top;
      if (!beside || !level) continue;
      members.add(segment);
      // a big delimiter's rows (a matrix's, a case split's) are level with the line it stands on
      if (segment.reach) {
        core.top = Math.max(core.top, segment.reach.top);
        core.bottom = Math.min(core.bottom, segment.reach.bottom);
      }
      box.x = Math.min(box.x, segment.x);
      box.right = Math.max(box.right, segment.right);
      box.top = Math.max(box.top, topOf(segment));
      box.bottom = Math.min(box.bottom, bottomOf(segment));
      grown = true;
    }
  }
  // pieces wholly within the formula's area, though their baseline is not level with its first pieces (a matrix's last
  // denominators under its delimiters' reach): the formula's TeX is read from every glyph in the area, and its text must
  // not be said again after it
  for (const segment of flow) {
    if (members.has(segment) || taken.has(segment) || worded(segment)) continue;
    if (segment.x >= box.x - 1 && segment.right <= box.right + 1 && segment.y + segment.size * 0.25 >= box.bottom && segment.y <= box.top) members.add(segment);
  }
  // letters set in a math font are variables each ("ezi" is e to the z_i), not a word's
  const text = [...members].map((segment) => (segment.mathLetters ? segment.text.replace(/\p{L}/gu, '$& ') : segment.text)).join(' ');
  // a case split's conditions are its words ("if x ≥ 0", "otherwise"), not prose
  const mathText = casesFrom === undefined ? text : text.replace(/\p{L}+/gu, (word) => (CONDITION_WORDS.has(word.toLowerCase()) ? '' : word));
  if (!looksLikeMath(mathText)) return undefined;
  // words level with it and close by: mathematics inside a sentence (an inline sum's limits on lines of their own),
  // which stays in its paragraph. Level is between its pieces' baselines: the sentence's line before a display may
  // end within the reach of the display's top letters
  const baselines = [...members].map((segment) => segment.y);
  const slack = Math.max(...[...members].map((segment) => segment.size)) * 0.3;
  const inline = flow.some(
    (segment) =>
      !members.has(segment) &&
      excluded(segment) &&
      segment.y >= Math.min(...baselines) - slack &&
      segment.y <= Math.max(...baselines) + slack &&
      segment.x <= box.right + segment.size * 3 &&
      segment.right >= box.x - segment.size * 3,
  );
  if (inline) return undefined;
  // a root's overbar just over the top line is the formula's too (only a root's: a brace's rules over it are another
  // line's, an \overbrace whose tips stand there)
  const reach = Math.max(...[...members].map((segment) => segment.size)) * 0.5;
  for (const other of text.includes('√') ? bars : []) {
    if (other.x1 >= box.x - 1 && other.x2 <= box.right + 1 && other.y1 > box.top && other.y1 <= box.top + reach) box.top = other.y1 + 1;
  }
  return { ...box, members };
}
