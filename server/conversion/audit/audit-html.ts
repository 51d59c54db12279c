import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import { runInNewContext, Script } from 'node:vm';
import { JSDOM, VirtualConsole } from 'jsdom';
import { AUDIT_SLICE_CHARS, forAudit } from './slices.ts';

const require = createRequire(import.meta.url);

/**
 * One jsdom window per thread, with axe-core evaluated in it once, audits every slice in turn: each
 * slice's document is parsed apart and its root swapped in. A fresh window and axe per slice cost
 * 15-25 ms to build and 10-20 ms to evaluate axe, and axe then ran cold each time (its functions are
 * new in every window, so V8 optimised none of them): 20 corpus documents audited in 1.43-1.94 s
 * fresh and 0.46-0.82 s in one window, with the same violations, targets, incomplete and passed rules.
 */
type AuditWindow = { dom: JSDOM; window: AxeWindow; uses: number };
let auditWindow: AuditWindow | undefined;
/** A window is rebuilt after this many slices, so nothing a long-lived worker's audits leave in it can pile up. */
const WINDOW_USES = 200;
/** axe refuses a second run while one is going in its window: slices of all audits in this thread take turns. */
let windowTurn: Promise<unknown> = Promise.resolve();

function openAuditWindow(): AuditWindow {
  if (auditWindow && auditWindow.uses < WINDOW_USES) return auditWindow;
  auditWindow?.dom.window.close();
  // A silent console: the document's own CSS may use features jsdom cannot parse.
  const dom = new JSDOM('<!DOCTYPE html><html><head></head><body></body></html>', { runScripts: 'outside-only', virtualConsole: new VirtualConsole() });
  // axe-core's 500 kB of source, read and compiled once for the window
  new Script(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'), { filename: 'axe.min.js' }).runInContext(dom.getInternalVMContext());
  auditWindow = { dom, window: dom.window as unknown as AxeWindow, uses: 0 };
  return auditWindow;
}

/** Builds the audit window ahead of the first audit (a worker warming up while pages still convert). */
export function prepareAudit(): void {
  openAuditWindow();
}

export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const;

/** Rules that cannot work without layout; they are switched off and the report says so. */
export const DISABLED_RULES = [
  {
    rule: 'color-contrast',
    reason: 'jsdom has no layout or computed colours, so contrast cannot be measured; the stylesheet uses a fixed high-contrast palette in light and dark mode',
  },
] as const;

export type AuditFinding = {
  rule: string;
  source: 'axe' | 'folio';
  impact: string | null;
  description: string;
  helpUrl?: string;
  wcag: string[];
  count: number;
  /** CSS selectors of the first few offending nodes */
  targets: string[];
};

export type AuditResult = {
  engine: string;
  tags: string[];
  disabledRules: { rule: string; reason: string }[];
  violations: AuditFinding[];
  /** total offending nodes over all rules */
  violationCount: number;
  /** rules axe could not decide (need manual review); they do not fail the document */
  incomplete: { rule: string; count: number }[];
  passedRules: number;
  /** how many jsdom documents the HTML was audited in */
  slices: number;
  wcagStatus: 'passed' | 'failed';
  ms: number;
};

type AxeNode = { target: unknown[] };
type AxeRule = { id: string; impact?: string | null; help: string; helpUrl: string; tags: string[]; nodes: AxeNode[] };
type AxeResults = { violations: AxeRule[]; incomplete: AxeRule[]; passes: AxeRule[] };
type AxeWindow = Window & { DOMParser: typeof DOMParser; axe: { run: (context: unknown, options: unknown) => Promise<AxeResults>; version: string } };

function wcagCriteria(tags: string[]): string[] {
  return tags
    .filter((t) => /^wcag\d{3,4}$/.test(t))
    .map((t) => {
      const digits = t.slice(4);
      return `${digits[0]}.${digits[1]}.${digits.slice(2)}`;
    });
}

function selector(el: Element): string {
  const parts: string[] = [];
  let node: Element | null = el;
  while (node && parts.length < 4) {
    if (node.id) {
      parts.unshift(`#${node.id}`);
      break;
    }
    const parent: Element | null = node.parentElement;
    const index = parent
      ? Array.from(parent.children)
          .filter((c) => c.tagName === node!.tagName)
          .indexOf(node) + 1
      : 1;
    parts.unshift(`${node.tagName.toLowerCase()}:nth-of-type(${index})`);
    node = parent;
  }
  return parts.join(' > ');
}

function accessibleText(el: Element): string {
  const label = el.getAttribute('aria-label')?.trim() ?? '';
  if (label) return label;
  const imgAlts = Array.from(el.querySelectorAll('img[alt]'))
    .map((i) => i.getAttribute('alt') ?? '')
    .join(' ');
  return `${el.textContent ?? ''} ${imgAlts}`.trim();
}

type SliceState = { prevHeading: number; sawH1: boolean };

/** Checks axe does not make, because axe passes HTML that has lost its structure. */
function folioChecks(document: Document, state: SliceState, slice: { first: boolean; last: boolean; shellHeadings: number }): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const add = (rule: string, description: string, wcag: string[], nodes: Element[], impact = 'serious') => {
    if (nodes.length > 0) findings.push({ rule, source: 'folio', impact, description, wcag, count: nodes.length, targets: nodes.slice(0, 5).map(selector) });
  };
  const root = document.documentElement;
  if (slice.first) {
    add(
      'folio-html-lang',
      'The page has no valid lang attribute',
      ['3.1.1'],
      /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/.test(root.getAttribute('lang') ?? '') ? [] : [root],
    );
    const title = document.querySelector('head > title');
    add('folio-document-title', 'The page has no non-empty <title>', ['2.4.2'], title?.textContent?.trim() ? [] : [root]);
  }
  // Headings before <main> (the shell) repeat in every slice: only the first slice counts them.
  const headings = Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6')).slice(slice.first ? 0 : slice.shellHeadings);
  if (headings.some((h) => h.tagName === 'H1')) state.sawH1 = true;
  if (slice.last) add('folio-page-has-h1', 'The page has no level-one heading', ['1.3.1'], state.sawH1 ? [] : [root], 'moderate');
  const skipped: Element[] = [];
  let prev = state.prevHeading;
  for (const h of headings) {
    const level = Number(h.tagName.slice(1));
    if (level > prev + 1) skipped.push(h);
    prev = level;
  }
  state.prevHeading = prev;
  add('folio-heading-order', 'A heading skips a level (e.g. h2 followed by h4, or a first heading below h1)', ['1.3.1'], skipped, 'moderate');
  add(
    'folio-empty-heading',
    'A heading has no text',
    ['1.3.1', '2.4.6'],
    headings.filter((h) => accessibleText(h) === ''),
  );
  add(
    'folio-empty-link',
    'A link has no text',
    ['2.4.4', '4.1.2'],
    Array.from(document.querySelectorAll('a[href]')).filter((a) => accessibleText(a) === ''),
  );
  add(
    'folio-image-alt',
    'An image has no alt attribute (use alt="" only for decoration)',
    ['1.1.1'],
    Array.from(document.querySelectorAll('img:not([alt])')).filter(
      (i) => i.getAttribute('role') !== 'presentation' && i.getAttribute('role') !== 'none' && !i.getAttribute('aria-label'),
    ),
  );
  // A figure the backend could not extract and nobody described shows a visible note; it is a report
  // warning, not a violation, since the HTML then holds no image lacking an alternative.
  add(
    'folio-table-headers',
    'A data table has no header cells (th)',
    ['1.3.1'],
    Array.from(document.querySelectorAll('table')).filter((t) => t.getAttribute('role') !== 'presentation' && t.querySelector('th') === null),
  );
  add(
    'folio-th-scope',
    'A header cell has no scope',
    ['1.3.1'],
    Array.from(document.querySelectorAll('th:not([scope])')).filter((th) => !th.closest('table')?.querySelector('[headers]')),
    'moderate',
  );
  return findings;
}

/** Rules about the page as a whole: run on the first slice only, or they would count once per slice. */
const DOCUMENT_RULES = [
  'html-has-lang',
  'html-lang-valid',
  'html-xml-lang-mismatch',
  'document-title',
  'bypass',
  'meta-viewport',
  'meta-refresh',
  'meta-refresh-no-exceptions',
];

type SliceResult = { violations: AuditFinding[]; incomplete: Map<string, number>; passes: number; version: string };

function auditSlice(html: string, state: SliceState, slice: { first: boolean; last: boolean; shellHeadings: number }): Promise<SliceResult> {
  const turn = windowTurn.then(() => auditInWindow(html, state, slice));
  windowTurn = turn.catch(() => undefined);
  return turn;
}

async function auditInWindow(html: string, state: SliceState, slice: { first: boolean; last: boolean; shellHeadings: number }): Promise<SliceResult> {
  const audit = openAuditWindow();
  audit.uses++;
  const { window } = audit;
  const document = window.document;
  const parsed = new window.DOMParser().parseFromString(html, 'text/html');
  document.replaceChild(document.adoptNode(parsed.documentElement), document.documentElement);
  try {
    const off = [...DISABLED_RULES.map((d) => d.rule), ...(slice.first ? [] : DOCUMENT_RULES)];
    const results = await window.axe.run(document, {
      runOnly: { type: 'tag', values: [...AXE_TAGS] },
      rules: Object.fromEntries(off.map((rule) => [rule, { enabled: false }])),
      resultTypes: ['violations', 'incomplete'],
      elementRef: false,
    });
    const violations: AuditFinding[] = results.violations.map((v) => ({
      rule: v.id,
      source: 'axe',
      impact: v.impact ?? null,
      description: v.help,
      helpUrl: v.helpUrl,
      wcag: wcagCriteria(v.tags),
      count: v.nodes.length,
      targets: v.nodes.slice(0, 5).map((n) => n.target.map(String).join(' ')),
    }));
    violations.push(...folioChecks(document, state, slice));
    return {
      violations,
      incomplete: new Map(results.incomplete.map((i) => [i.id, i.nodes.length])),
      passes: results.passes.length,
      version: window.axe.version,
    };
  } finally {
    // the slice's nodes go with it; the window stays for the next
    document.documentElement.replaceChildren();
  }
}

const countHeadings = (html: string) => (html.match(/<h[1-6][\s>]/gi) ?? []).length;

/** The documents the audit runs in: each is the shell around one slice of <main>, read when its turn comes. */
function auditSlices(input: AuditInput, limit: number): { length: number; read: (index: number) => Promise<string> } {
  if (typeof input === 'string') return { length: 1, read: async () => input };
  const { before, after } = input.shell;
  if ('file' in input) {
    const ranges = input.slices.length > 0 ? input.slices : [[0, 0] as [number, number]];
    return {
      length: ranges.length,
      read: async (index) => {
        const [start, end] = ranges[index]!;
        if (end <= start) return before + after;
        const handle = await open(input.file, 'r');
        try {
          const buffer = Buffer.alloc(end - start);
          await handle.read(buffer, 0, buffer.length, start);
          return before + buffer.toString('utf8') + after;
        } finally {
          await handle.close();
        }
      },
    };
  }
  if (input.html.length <= limit) return { length: 1, read: async () => input.html };
  // what the audit leaves out (image bytes, MathML layout) does not count towards a slice's size
  const groups: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const part of input.mainParts) {
    const length = forAudit(part).length;
    if (size + length > limit && current.length > 0) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(part);
    size += length + 1;
  }
  groups.push(current);
  return { length: groups.length, read: async (index) => before + groups[index]!.join('\n') + after };
}

let gc: (() => void) | undefined;
/**
 * V8 lets dead jsdom windows pile up until heap pressure: auditing 1,000 pages
 * in slices peaked at 328 MB of heap (558 MB RSS) without a collection between
 * slices and 137 MB with one. The flag only exposes gc(); it changes nothing else.
 */
function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

export { AUDIT_SLICE_CHARS };

/**
 * A whole page as a string; a rendered document in memory with its shell and the top-level parts of
 * <main>; or a rendered HTML file with its shell and the byte ranges of <main>'s slices in it, which
 * the audit reads one at a time (the streaming renderer's output, never held whole in memory).
 */
export type AuditInput =
  | string
  | { html: string; shell: { before: string; after: string }; mainParts: string[] }
  | { file: string; shell: { before: string; after: string }; slices: [start: number, end: number][] };

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules) in jsdom over the HTML, plus
 * Folio's structural checks. wcagStatus is 'passed' only when no rule of
 * either kind has a violation. Given the renderer's shell and parts, a long
 * document is audited slice by slice (the shell around each slice of <main>),
 * which bounds memory; whole-page rules run once, heading order carries over.
 * Cross-slice checks axe would make (duplicate ids across slices) are lost;
 * ids are unique by construction in our renderer.
 */
export async function auditHtml(input: AuditInput, options: { sliceChars?: number } = {}): Promise<AuditResult> {
  const started = performance.now();
  const slices = auditSlices(input, options.sliceChars ?? AUDIT_SLICE_CHARS);
  const shellHeadings = typeof input === 'string' ? 0 : countHeadings(input.shell.before) + countHeadings(input.shell.after);
  const sliceCount = slices.length;
  const state: SliceState = { prevHeading: 0, sawH1: false };
  const byRule = new Map<string, AuditFinding>();
  const incomplete = new Map<string, number>();
  let passedRules = 0;
  let version = '';
  for (let i = 0; i < sliceCount; i++) {
    const html = forAudit(await slices.read(i));
    const result = await auditSlice(html, state, { first: i === 0, last: i === sliceCount - 1, shellHeadings: sliceCount > 1 ? shellHeadings : 0 });
    if (sliceCount > 1) collectGarbage();
    version = result.version;
    passedRules = Math.max(passedRules, result.passes);
    for (const [rule, count] of result.incomplete) incomplete.set(rule, (incomplete.get(rule) ?? 0) + count);
    for (const v of result.violations) {
      const seen = byRule.get(`${v.source}:${v.rule}`);
      if (!seen) byRule.set(`${v.source}:${v.rule}`, v);
      else {
        seen.count += v.count;
        seen.targets = [...seen.targets, ...v.targets].slice(0, 5);
      }
    }
  }
  const violations = [...byRule.values()].sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
  return {
    engine: `axe-core ${version} in jsdom`,
    tags: [...AXE_TAGS],
    disabledRules: DISABLED_RULES.map((d) => ({ ...d })),
    violations,
    violationCount: violations.reduce((sum, v) => sum + v.count, 0),
    incomplete: [...incomplete].map(([rule, count]) => ({ rule, count })),
    passedRules,
    slices: sliceCount,
    wcagStatus: violations.length === 0 ? 'passed' : 'failed',
    ms: Math.round(performance.now() - started),
  };
}
