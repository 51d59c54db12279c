/**
 * TeX from the Unicode text of a formula: a small, conservative converter.
 * It maps what the text says unambiguously (Greek letters, operators and
 * relations, Unicode and layout superscripts and subscripts, √ of one term,
 * a fraction of two plain terms) and gives up — returns undefined — on
 * anything it cannot read for certain, so a formula gets no TeX rather than
 * wrong TeX. Prose is never converted: `looksLikeMath` says whether a text
 * is a formula at all.
 */

/** A piece of a formula's text; `script` from the layout's rise (raised or lowered and smaller). */
export type MathRun = { text: string; script?: 'sup' | 'sub' };

export const SYMBOLS: Record<string, string> = {
  α: '\\alpha',
  β: '\\beta',
  γ: '\\gamma',
  δ: '\\delta',
  ε: '\\varepsilon',
  ϵ: '\\epsilon',
  ζ: '\\zeta',
  η: '\\eta',
  θ: '\\theta',
  ϑ: '\\vartheta',
  ι: '\\iota',
  κ: '\\kappa',
  λ: '\\lambda',
  μ: '\\mu',
  ν: '\\nu',
  ξ: '\\xi',
  π: '\\pi',
  ϖ: '\\varpi',
  ρ: '\\rho',
  ϱ: '\\varrho',
  σ: '\\sigma',
  ς: '\\varsigma',
  τ: '\\tau',
  υ: '\\upsilon',
  φ: '\\varphi',
  ϕ: '\\phi',
  χ: '\\chi',
  ψ: '\\psi',
  ω: '\\omega',
  Γ: '\\Gamma',
  Δ: '\\Delta',
  Θ: '\\Theta',
  Λ: '\\Lambda',
  Ξ: '\\Xi',
  Π: '\\Pi',
  Σ: '\\Sigma',
  Υ: '\\Upsilon',
  Φ: '\\Phi',
  Ψ: '\\Psi',
  Ω: '\\Omega',
  // TeX Live's ToUnicode for cmr gives \Delta and \Omega as the increment and ohm signs, and \mu as the micro sign
  '∆': '\\Delta',
  '\u2126': '\\Omega',
  µ: '\\mu',
  '∑': '\\sum',
  '∏': '\\prod',
  '∫': '\\int',
  '∬': '\\iint',
  '∭': '\\iiint',
  '∮': '\\oint',
  '∐': '\\coprod',
  '∗': '\\ast',
  '⋆': '\\star',
  '⋃': '\\bigcup',
  '⋂': '\\bigcap',
  '⨁': '\\bigoplus',
  '⨂': '\\bigotimes',
  '⨀': '\\bigodot',
  '⨄': '\\biguplus',
  '⨆': '\\bigsqcup',
  '⋀': '\\bigwedge',
  '⋁': '\\bigvee',
  '∞': '\\infty',
  '∂': '\\partial',
  '∇': '\\nabla',
  '≤': '\\leq',
  '≥': '\\geq',
  '≠': '\\neq',
  '≈': '\\approx',
  '≡': '\\equiv',
  '∼': '\\sim',
  '≅': '\\cong',
  '∝': '\\propto',
  '≪': '\\ll',
  '≫': '\\gg',
  '∈': '\\in',
  '∉': '\\notin',
  '∋': '\\ni',
  '⊂': '\\subset',
  '⊆': '\\subseteq',
  '⊃': '\\supset',
  '⊇': '\\supseteq',
  '∪': '\\cup',
  '∩': '\\cap',
  '∅': '\\emptyset',
  '∀': '\\forall',
  '∃': '\\exists',
  '¬': '\\neg',
  '∧': '\\wedge',
  '∨': '\\vee',
  '⊥': '\\perp',
  '∥': '\\|',
  '→': '\\to',
  '⟶': '\\longrightarrow',
  '⟹': '\\Longrightarrow',
  '←': '\\leftarrow',
  '↔': '\\leftrightarrow',
  '⇒': '\\Rightarrow',
  '⇐': '\\Leftarrow',
  '⇔': '\\Leftrightarrow',
  '↦': '\\mapsto',
  '↪': '\\hookrightarrow',
  '±': '\\pm',
  '∓': '\\mp',
  '×': '\\times',
  '·': '\\cdot',
  '⋅': '\\cdot',
  '÷': '\\div',
  '∘': '\\circ',
  '◦': '\\circ',
  '⊕': '\\oplus',
  '⊗': '\\otimes',
  '−': '-',
  '–': '-',
  '…': '\\ldots',
  '⋯': '\\cdots',
  '′': "'",
  '″': "''",
  '⟨': '\\langle',
  '⟩': '\\rangle',
  '〈': '\\langle',
  '〉': '\\rangle',
  '‖': '\\|',
  '⌊': '\\lfloor',
  '⌋': '\\rfloor',
  '⌈': '\\lceil',
  '⌉': '\\rceil',
  '∣': '\\mid',
  '∤': '\\nmid',
  '⊤': '\\top',
  '⊢': '\\vdash',
  '⊨': '\\models',
  '∖': '\\setminus',
  '≺': '\\prec',
  '≻': '\\succ',
  '⪯': '\\preceq',
  '⪰': '\\succeq',
  '≃': '\\simeq',
  '≍': '\\asymp',
  '≲': '\\lesssim',
  '≳': '\\gtrsim',
  '≜': '\\triangleq',
  '≐': '\\doteq',
  '⊊': '\\subsetneq',
  '⊎': '\\uplus',
  '⊔': '\\sqcup',
  '⊓': '\\sqcap',
  '⊑': '\\sqsubseteq',
  '⊙': '\\odot',
  '⊖': '\\ominus',
  '⋄': '\\diamond',
  '†': '\\dagger',
  '‡': '\\ddagger',
  '↑': '\\uparrow',
  '↓': '\\downarrow',
  '⟵': '\\longleftarrow',
  '⟼': '\\longmapsto',
  '↠': '\\twoheadrightarrow',
  '⋮': '\\vdots',
  '⋱': '\\ddots',
  '∠': '\\angle',
  '△': '\\triangle',
  ℵ: '\\aleph',
  ℘: '\\wp',
  ℜ: '\\Re',
  ℑ: '\\Im',
  '°': '^{\\circ}',
  ℝ: '\\mathbb{R}',
  ℕ: '\\mathbb{N}',
  ℤ: '\\mathbb{Z}',
  ℚ: '\\mathbb{Q}',
  ℂ: '\\mathbb{C}',
  ℓ: '\\ell',
  ℏ: '\\hbar',
  '{': '\\{',
  '}': '\\}',
  '%': '\\%',
  '#': '\\#',
  '&': '\\&',
};

const SUPERSCRIPTS: Record<string, string> = {
  '⁰': '0',
  '¹': '1',
  '²': '2',
  '³': '3',
  '⁴': '4',
  '⁵': '5',
  '⁶': '6',
  '⁷': '7',
  '⁸': '8',
  '⁹': '9',
  '⁺': '+',
  '⁻': '-',
  '⁼': '=',
  '⁽': '(',
  '⁾': ')',
  ⁿ: 'n',
  ⁱ: 'i',
};
const SUBSCRIPTS: Record<string, string> = {
  '₀': '0',
  '₁': '1',
  '₂': '2',
  '₃': '3',
  '₄': '4',
  '₅': '5',
  '₆': '6',
  '₇': '7',
  '₈': '8',
  '₉': '9',
  '₊': '+',
  '₋': '-',
  '₌': '=',
  '₍': '(',
  '₎': ')',
  ₐ: 'a',
  ₑ: 'e',
  ₒ: 'o',
  ₓ: 'x',
  ₕ: 'h',
  ₖ: 'k',
  ₗ: 'l',
  ₘ: 'm',
  ₙ: 'n',
  ₚ: 'p',
  ₛ: 's',
  ₜ: 't',
  ᵢ: 'i',
  ⱼ: 'j',
  ᵣ: 'r',
  ᵤ: 'u',
  ᵥ: 'v',
};

/** Names TeX sets upright as operators. */
export const FUNCTIONS = new Set([
  'sin',
  'cos',
  'tan',
  'cot',
  'sec',
  'csc',
  'sinh',
  'cosh',
  'tanh',
  'arcsin',
  'arccos',
  'arctan',
  'log',
  'ln',
  'lg',
  'exp',
  'lim',
  'sup',
  'inf',
  'max',
  'min',
  'det',
  'dim',
  'ker',
  'deg',
  'gcd',
  'arg',
  'mod',
]);

/** Operator names mathematics sets upright that TeX has no command of its own for (\\operatorname{Hom}). */
const OPERATOR_NAMES = new Set(['Hom', 'End', 'Aut', 'Ext', 'Tor', 'Ann', 'Spec', 'tr', 'coker', 'supp', 'sgn', 'diag', 'id']);

/** Words of a condition set in a display beside its formula ("in Ω", "for all x", "für jedes n"): text, not an operator's name. */
export const CONDITION_WORDS = new Set([
  ...['in', 'on', 'for', 'all', 'every', 'each', 'some', 'if', 'and', 'or', 'where', 'with', 'when', 'otherwise', 'else'],
  ...['für', 'alle', 'jedes', 'jede', 'jeden', 'falls', 'und', 'oder', 'mit', 'sonst', 'wenn'],
]);

/** A word a formula may hold: an operator name, TeX's own (\\sin) or not (\\operatorname{Hom}). */
export const isOperatorName = (word: string) => FUNCTIONS.has(word) || OPERATOR_NAMES.has(word);

/** Plain ASCII that means itself in TeX math. */
const PLAIN = /^[A-Za-z0-9+\-=<>()[\],.;:!|'/*]$/;
const RELATIONS_AND_OPERATORS = /[=<>+\-*/^∑∏∐⋃⋂⨁⨂⨀⨄⨆⋀⋁∫∬∮√≤≥≠≈≡∼≅∝∈∉⊂⊆⊃⊇∪∩→⟶⇒⟹⇔↦±∓×·⋅÷∘−∂∇∞]/u;

/** A simple term a fraction or a root may take: a number, one letter or Greek letter, or a parenthesised group. */
type Token = { raw: string; tex: string; simple: boolean };

/** TeX's math accents by the combining mark a letter carries. */
const MATH_ACCENTS: Record<string, string> = {
  '\u0302': 'hat',
  '\u0303': 'tilde',
  '\u0304': 'bar',
  '\u0307': 'dot',
  '\u0308': 'ddot',
  '\u0301': 'acute',
  '\u0300': 'grave',
  '\u0306': 'breve',
  '\u030c': 'check',
  '\u030a': 'mathring',
  '\u20d7': 'vec',
};

/** A display formula's TeX with its equation number (KaTeX sets \tag in display mode, as the HTML renders it). */
export const withTag = (tex: string, tag: string | undefined) => (tag ? `${tex}\\tag{${tag}}` : tex);

/**
 * A letter with accents (the text layer's mark on it, or one composed with it: é) as TeX's accents over the letter:
 * undefined for anything else, null for an accent TeX has no command for.
 */
export function accentedTex(
  raw: string,
  letterTex: (letter: string) => string | undefined = (letter) => (/^[A-Za-z]$/.test(letter) ? letter : SYMBOLS[letter]),
): string | null | undefined {
  const [, letter, marks] = raw.normalize('NFD').match(/^(\p{L})(\p{M}+)$/u) ?? [];
  if (!letter || !marks) return undefined;
  const base = letterTex(letter);
  if (base === undefined) return null;
  const accents = [...marks].map((mark) => MATH_ACCENTS[mark]);
  // an accent math has no command for (a cedilla, a double acute): the letter as text, as printed
  if (accents.some((accent) => accent === undefined)) return `\\text{${raw.normalize('NFC')}}`;
  return accents.reduce((tex, accent) => `\\${accent}{${tex}}`, base);
}

function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  // a letter with accents (put on it by the text layer) is a token of its own: \tilde{F}
  // (a letter run stops before a letter carrying a mark, so "aF̃" is "a" then "F̃")
  const pattern = /\p{L}\p{M}+|(?:\p{L}(?!\p{M}))+|\d+(?:\.\d+)?|\s+|[\s\S]/gu;
  for (const [raw] of text.matchAll(pattern)) {
    const accented = accentedTex(raw);
    if (accented !== undefined) {
      if (accented === null) return undefined;
      tokens.push({ raw, tex: accented, simple: true });
      continue;
    }
    if (/^\s+$/.test(raw)) {
      tokens.push({ raw, tex: ' ', simple: false });
      continue;
    }
    if (/^\d/.test(raw)) {
      tokens.push({ raw, tex: raw, simple: true });
      continue;
    }
    if (/^\p{L}+$/u.test(raw)) {
      if (/^[A-Za-z]+$/.test(raw)) {
        if (FUNCTIONS.has(raw)) tokens.push({ raw, tex: `\\${raw} `, simple: false });
        else if (OPERATOR_NAMES.has(raw)) tokens.push({ raw, tex: `\\operatorname{${raw}}`, simple: false });
        // a longer word inside a formula is a word ("for", "falls"), set as text
        else if (raw.length >= 3) tokens.push({ raw, tex: `\\text{${raw}}`, simple: false });
        else tokens.push({ raw, tex: raw, simple: raw.length === 1 });
        continue;
      }
      // a word of accented Latin letters ("für", "Universität") is a word, set as text (a letter with Unicode scripts, xᵢ, is not)
      if (/^\p{Script=Latin}{2,}$/u.test(raw) && [...raw].every((char) => SUPERSCRIPTS[char] === undefined && SUBSCRIPTS[char] === undefined)) {
        tokens.push({ raw, tex: `\\text{${raw}}`, simple: false });
        continue;
      }
      // letters outside Latin: Greek and double-struck map one by one; any other script is not a formula we can read
      const mapped = [...raw].map(
        (char) =>
          SYMBOLS[char] ??
          accentedTex(char) ??
          (SUPERSCRIPTS[char] !== undefined
            ? `^{${SUPERSCRIPTS[char]}}`
            : SUBSCRIPTS[char] !== undefined
              ? `_{${SUBSCRIPTS[char]}}`
              : /^[A-Za-z]$/.test(char)
                ? char
                : undefined),
      );
      if (mapped.some((part) => part === undefined)) return undefined;
      tokens.push({
        raw,
        tex: mapped
          .map((part) => (/[a-z]$/i.test(part!) && part!.startsWith('\\') ? `${part} ` : part))
          .join('')
          .trimEnd(),
        simple: [...raw].length === 1,
      });
      continue;
    }
    if (SUPERSCRIPTS[raw] !== undefined || SUBSCRIPTS[raw] !== undefined) {
      tokens.push({ raw, tex: raw, simple: false });
      continue;
    }
    const symbol = SYMBOLS[raw];
    if (symbol !== undefined) tokens.push({ raw, tex: /^\\[a-zA-Z]+$/.test(symbol) ? `${symbol} ` : symbol, simple: false });
    else if (raw === '√') tokens.push({ raw, tex: raw, simple: false });
    else if (PLAIN.test(raw)) tokens.push({ raw, tex: raw, simple: false });
    else return undefined;
  }
  return tokens;
}

/** TeX of a plain stretch of formula text, or undefined when some of it cannot be read for certain. */
function convertPlain(text: string): string | undefined {
  const tokens = tokenize(text);
  if (!tokens) return undefined;
  const out: Token[] = [];
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    // runs of Unicode superscript or subscript characters become one script
    for (const [table, mark] of [
      [SUPERSCRIPTS, '^'],
      [SUBSCRIPTS, '_'],
    ] as const) {
      if (table[token.raw] === undefined) continue;
      let body = '';
      while (index < tokens.length && table[tokens[index]!.raw] !== undefined) body += table[tokens[index++]!.raw];
      index--;
      out.push({ raw: body, tex: `${mark}{${body}}`, simple: false });
    }
    if (SUPERSCRIPTS[token.raw] !== undefined || SUBSCRIPTS[token.raw] !== undefined) continue;
    if (token.raw === '√') {
      let next = index + 1;
      while (tokens[next]?.tex === ' ') next++;
      const term = termAt(tokens, next);
      if (!term) return undefined;
      const inner = convertPlain(term.inner)?.trim();
      if (inner === undefined) return undefined;
      out.push({ raw: '', tex: `\\sqrt{${inner}}`, simple: true });
      index = term.end - 1;
      continue;
    }
    // a fraction only when it is clear: a plain term on each side of the slash, written without spaces
    if (token.raw === '/' && out.at(-1)?.simple) {
      const term = termAt(tokens, index + 1);
      if (term?.simple) {
        const numerator = out.pop()!;
        const denominator = convertPlain(term.inner)?.trim();
        if (denominator === undefined) return undefined;
        const top = numerator.tex.replace(/^\((.*)\)$/, '$1');
        out.push({ raw: '', tex: `\\frac{${top}}{${denominator}}`, simple: false });
        index = term.end - 1;
        continue;
      }
    }
    if (token.raw === '(') {
      // a parenthesised group is one term, for a fraction's numerator
      const term = termAt(tokens, index);
      if (term) {
        const inner = convertPlain(term.inner)?.trim();
        if (inner === undefined) return undefined;
        out.push({ raw: term.inner, tex: `(${inner})`, simple: true });
        index = term.end - 1;
        continue;
      }
    }
    out.push(token);
  }
  return (
    out
      // a command's name runs on into a letter after it ("\\inN"): a space ends it
      .map((token, index) => (index > 0 && /\\[A-Za-z]+$/.test(out[index - 1]!.tex) && /^[A-Za-z]/.test(token.tex) ? ` ${token.tex}` : token.tex))
      .join('')
      .replace(/\s+/g, ' ')
      .replace(/ ([_^])/g, '$1')
  );
}

/** The term starting at a token: one simple token, or a parenthesised group (returned without its parentheses). */
function termAt(tokens: Token[], start: number): { inner: string; end: number; simple: boolean } | undefined {
  const first = tokens[start];
  if (!first) return undefined;
  if (first.raw === '(') {
    let depth = 0;
    for (let index = start; index < tokens.length; index++) {
      if (tokens[index]!.raw === '(') depth++;
      if (tokens[index]!.raw === ')' && --depth === 0) {
        return {
          inner: tokens
            .slice(start + 1, index)
            .map((token) => token.raw)
            .join(''),
          end: index + 1,
          simple: true,
        };
      }
    }
    return undefined;
  }
  return first.simple ? { inner: first.raw, end: start + 1, simple: true } : undefined;
}

/**
 * TeX for a formula given as runs (scripts marked by the layout) or as one
 * string; undefined when any part cannot be converted for certain.
 */
export function formulaToTex(input: string | MathRun[]): string | undefined {
  // pdfTeX draws ↦ as a bar glyph that extracts as "7" beside the arrow, strikes a relation with a slash that extracts
  // as "6" ("A∩B 6=∅" for A∩B≠∅: never a digit of the formula, which TeX would set apart from the relation or as a
  // script of a letter), and draws long arrows from dashes and an arrow head; the pieces may come as separate runs, so
  // plain runs merge first
  const merged: MathRun[] = [];
  for (const run of typeof input === 'string' ? [{ text: input }] : input) {
    const last = merged.at(-1);
    if (last && !last.script && !run.script) last.text += run.text;
    else merged.push({ ...run });
  }
  const runs = merged.map((run) => ({
    ...run,
    text: run.text
      .replace(/(^|\s)7→/g, '$1↦')
      .replace(/(^|[\s(])6=/g, '$1≠')
      .replace(/(^|[\s(])6∈/g, '$1∉')
      .replace(/[−-]{2,}→/g, '⟶')
      .replace(/={2,}⇒/g, '⟹'),
  }));
  // scripts read apart from their base ("e" + raised "iπ" is not the word "eiπ")
  if (!looksLikeMath(runs.map((run) => (run.script ? ` ${run.text} ` : run.text)).join(''))) return undefined;
  let tex = '';
  for (const run of runs) {
    const text = run.text.replace(/\s+/g, ' ');
    if (text.trim() === '') {
      tex += ' ';
      continue;
    }
    // a script sits right against its base: after a space (or first) a smaller glyph is no script (a big operator's limits, a font change)
    const script = run.script && !/^\s/.test(run.text) && /\S$/.test(tex) ? run.script : undefined;
    const converted = convertPlain(script ? text.trim() : text);
    if (converted === undefined) return undefined;
    if (script && /^'+$/.test(converted.trim())) tex += converted.trim();
    else tex += script === 'sup' ? `^{${converted.trim()}}` : script === 'sub' ? `_{${converted.trim()}}` : converted;
  }
  let result = tex
    .replace(/\s+/g, ' ')
    .replace(/ ([_^])/g, '$1')
    .trim();
  // consecutive scripts of one kind (x²³, a layout run split in two) are one script: x^{23}, not the TeX error x^{2}^{3}
  for (const mark of ['^', '_']) {
    const twice = new RegExp(`\\${mark}\\{([^{}]*)\\}\\${mark}\\{([^{}]*)\\}`);
    while (twice.test(result)) result = result.replace(twice, `${mark}{$1$2}`);
  }
  return result === '' ? undefined : result;
}

/**
 * Whether a text is a formula rather than words about one ("Area of a
 * Triangle" is an alt text, not mathematics): it must carry an operator, a
 * relation or a Greek letter, and hardly any words.
 */
export function looksLikeMath(text: string, mathLetters = false): boolean {
  const visible = text.replace(/\s/g, '');
  if (visible.length === 0) return false;
  if (!RELATIONS_AND_OPERATORS.test(text) && !/[\u0370-\u03ff]/u.test(text) && !/[⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉]/u.test(text)) return false;
  // a name right before its parenthesis is a function's ("softmax(z)"), as an operator name is
  const words = (text.match(mathLetters ? /\p{L}{4,}(?!\p{L}|\s?\()/gu : /\p{L}{3,}(?!\p{L}|\s?\()/gu) ?? []).filter((word) => !isOperatorName(word));
  const wordChars = words.reduce((sum, word) => sum + word.length, 0);
  return words.length <= 2 && wordChars <= visible.length * 0.4;
}

/** A relation: what a formula line, and a display's condition, must have. */
export const RELATION = /[=<>≤≥≠≈≡≅∼∝∈∉⊂⊆⊃⊇→⟶⇒⟹⇔↦]/u;

/**
 * A line of an untagged page that is a formula and nothing else, confidently:
 * a relation, no words but operator names, mostly symbols, letters standing
 * alone and numbers, and TeX that converts. Lines that merely contain some
 * mathematics stay text.
 */
export function isFormulaLine(text: string, mathLetters = false): boolean {
  if (!RELATION.test(text) || !looksLikeMath(text, mathLetters)) return false;
  // where every letter is set in a math font, up to three side by side are a product of variables ("mc" of E = mc²)
  // a variable beside a Greek letter ("Bε") is no word; two Latin letters together are, unless an operator name
  const words = (text.match(mathLetters ? /\p{Script=Latin}{4,}/gu : /\p{Script=Latin}{2,}/gu) ?? []).filter((word) => !isOperatorName(word));
  if (words.length > 0) return false;
  const visible = text.replace(/\s/g, '');
  // letters set in a math font are each a variable, side by side or not ("eiπ" of e^{iπ})
  const mathy = (visible.match(mathLetters ? /./gu : /[^\p{L}]|(?<!\p{L})\p{L}(?!\p{L})/gu) ?? []).length;
  return visible.length >= 3 && mathy >= visible.length * 0.6;
}
