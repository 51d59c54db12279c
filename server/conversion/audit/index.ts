import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { JSDOM, VirtualConsole } from 'jsdom';

const require = createRequire(import.meta.url);
let axeSource: string | undefined;
function loadAxe(): string {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  return axeSource;
}

export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const;

/** Rules that cannot work without layout; they are switched off and the report says so. */
export const DISABLED_RULES = [
  { rule: 'color-contrast', reason: 'jsdom has no layout or computed colours, so contrast cannot be measured; the stylesheet uses a fixed high-contrast palette in light and dark mode' },
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
  wcagStatus: 'passed' | 'failed';
  ms: number;
};

type AxeNode = { target: unknown[] };
type AxeRule = { id: string; impact?: string | null; help: string; helpUrl: string; tags: string[]; nodes: AxeNode[] };
type AxeResults = { violations: AxeRule[]; incomplete: AxeRule[]; passes: AxeRule[] };
type AxeWindow = Window & { axe: { run: (context: unknown, options: unknown) => Promise<AxeResults>; version: string } };

function wcagCriteria(tags: string[]): string[] {
  return tags.filter((t) => /^wcag\d{3,4}$/.test(t)).map((t) => {
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
    const index = parent ? Array.from(parent.children).filter((c) => c.tagName === node!.tagName).indexOf(node) + 1 : 1;
    parts.unshift(`${node.tagName.toLowerCase()}:nth-of-type(${index})`);
    node = parent;
  }
  return parts.join(' > ');
}

function accessibleText(el: Element): string {
  const label = el.getAttribute('aria-label')?.trim() ?? '';
  if (label) return label;
  const imgAlts = Array.from(el.querySelectorAll('img[alt]')).map((i) => i.getAttribute('alt') ?? '').join(' ');
  return `${el.textContent ?? ''} ${imgAlts}`.trim();
}

/** Checks axe does not make, because axe passes HTML that has lost its structure. */
function folioChecks(document: Document): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const add = (rule: string, description: string, wcag: string[], nodes: Element[], impact = 'serious') => {
    if (nodes.length > 0) findings.push({ rule, source: 'folio', impact, description, wcag, count: nodes.length, targets: nodes.slice(0, 5).map(selector) });
  };
  const root = document.documentElement;
  add('folio-html-lang', 'The page has no valid lang attribute', ['3.1.1'], /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/.test(root.getAttribute('lang') ?? '') ? [] : [root]);
  const title = document.querySelector('head > title');
  add('folio-document-title', 'The page has no non-empty <title>', ['2.4.2'], title && title.textContent?.trim() ? [] : [root]);
  const headings = Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'));
  add('folio-page-has-h1', 'The page has no level-one heading', ['1.3.1'], headings.some((h) => h.tagName === 'H1') ? [] : [root], 'moderate');
  const skipped: Element[] = [];
  let prev = 0;
  for (const h of headings) {
    const level = Number(h.tagName.slice(1));
    if (level > prev + 1) skipped.push(h);
    prev = level;
  }
  add('folio-heading-order', 'A heading skips a level (e.g. h2 followed by h4, or a first heading below h1)', ['1.3.1'], skipped, 'moderate');
  add('folio-empty-heading', 'A heading has no text', ['1.3.1', '2.4.6'], headings.filter((h) => accessibleText(h) === ''));
  add('folio-empty-link', 'A link has no text', ['2.4.4', '4.1.2'], Array.from(document.querySelectorAll('a[href]')).filter((a) => accessibleText(a) === ''));
  add('folio-image-alt', 'An image has no alt attribute (use alt="" only for decoration)', ['1.1.1'], Array.from(document.querySelectorAll('img:not([alt])')).filter((i) => i.getAttribute('role') !== 'presentation' && i.getAttribute('role') !== 'none' && !i.getAttribute('aria-label')));
  // A figure the backend could not extract and nobody described shows a visible note; it is a report
  // warning, not a violation, since the HTML then holds no image lacking an alternative.
  add('folio-table-headers', 'A data table has no header cells (th)', ['1.3.1'], Array.from(document.querySelectorAll('table')).filter((t) => t.getAttribute('role') !== 'presentation' && t.querySelector('th') === null));
  add('folio-th-scope', 'A header cell has no scope', ['1.3.1'], Array.from(document.querySelectorAll('th:not([scope])')).filter((th) => !th.closest('table')?.querySelector('[headers]')), 'moderate');
  return findings;
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules) in jsdom over the HTML, plus
 * Folio's structural checks. wcagStatus is 'passed' only when no rule of
 * either kind has a violation.
 */
export async function auditHtml(html: string): Promise<AuditResult> {
  const started = performance.now();
  // A silent console: the document's own CSS may use features jsdom cannot parse.
  const dom = new JSDOM(html, { runScripts: 'outside-only', pretendToBeVisual: false, virtualConsole: new VirtualConsole() });
  try {
    const window = dom.window as unknown as AxeWindow;
    (dom.window as unknown as { eval: (code: string) => void }).eval(loadAxe());
    const results = await window.axe.run(window.document, {
      runOnly: { type: 'tag', values: [...AXE_TAGS] },
      rules: Object.fromEntries(DISABLED_RULES.map((d) => [d.rule, { enabled: false }])),
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
    violations.push(...folioChecks(window.document));
    violations.sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
    const violationCount = violations.reduce((sum, v) => sum + v.count, 0);
    return {
      engine: `axe-core ${window.axe.version} in jsdom`,
      tags: [...AXE_TAGS],
      disabledRules: DISABLED_RULES.map((d) => ({ ...d })),
      violations,
      violationCount,
      incomplete: results.incomplete.map((i) => ({ rule: i.id, count: i.nodes.length })),
      passedRules: results.passes.length,
      wcagStatus: violations.length === 0 ? 'passed' : 'failed',
      ms: Math.round(performance.now() - started),
    };
  } finally {
    dom.window.close();
  }
}
