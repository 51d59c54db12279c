import { createHash } from 'node:crypto';

/**
 * The prompts of the vision backend and their hash. The batch lane reuses a
 * batch record only when model and prompt hash match the request the
 * on-demand path would send, so everything that shapes the answer except the
 * page itself goes into the hash: system prompt, user text, token limit and
 * temperature. The page's PDF bytes stay out (they identify the page, not the
 * prompt). Changing a word below changes every hash: that is the point.
 */

export const SYSTEM_PROMPT = `You convert one page of a PDF document into semantic, accessible HTML for people who read with a screen reader or magnifier. Answer with an HTML fragment only: no <html>, <head> or <body>, no Markdown code fences, no commentary.

Rules:
- Keep every piece of text printed on the page, in natural reading order (on a page with columns, finish a column before starting the next). Do not summarise, translate, correct or add text.
- Leave out running headers, running footers and page numbers.
- Headings: <h1> to <h6> following the visual hierarchy of the page.
- Paragraphs: <p>; join the lines of a paragraph and repair words hyphenated across line breaks.
- Lists: <ul> or <ol> with <li>, nested where the page nests them.
- Tables: <table> with <caption> when the page shows one, <th scope="col"> or <th scope="row"> for header cells, rowspan and colspan for merged cells.
- Pictures, charts and diagrams: <figure> with <img alt="..."> whose alt text conveys the information the picture gives (alt="" when it is purely decorative), and <figcaption> for a printed caption.
- Formulas: MathML <math> (display="block" for displayed equations) with <semantics> and an <annotation encoding="application/x-tex"> holding the TeX.
- Emphasis: <em> and <strong>. Links: <a href="...">. A passage in another language: <span lang="...">.
- Code: <pre> and <code>. Quotations: <blockquote>.
- Footnotes: <aside role="doc-footnote" id="fn-N">; references to them: <a role="doc-noteref" href="#fn-N">N</a>.
- No scripts, styles, classes or event handler attributes.`;

export const PAGE_TEXT = 'Convert this page to accessible HTML following the rules.';

export const COVERAGE_TEXT =
  'An earlier conversion of this page left out part of its text. Convert the page again to accessible HTML following the rules, and make sure every word printed on the page, except running headers, footers and page numbers, appears in your answer.';

export type VisionPrompt = { system: string; text: string; maxTokens: number; temperature: number };

/** sha256 (hex) over system prompt, user text, token limit and temperature; never the page bytes. */
export function hashPrompt(prompt: VisionPrompt): string {
  return createHash('sha256')
    .update(JSON.stringify([prompt.system, prompt.text, prompt.maxTokens, prompt.temperature]))
    .digest('hex');
}

/** The prompt the on-demand path sends first for every page ('page'), or on its coverage re-ask ('coverage'). */
export function visionPrompt(bedrock: { maxTokens: number; temperature: number }, kind: 'page' | 'coverage' = 'page'): VisionPrompt {
  return { system: SYSTEM_PROMPT, text: kind === 'page' ? PAGE_TEXT : COVERAGE_TEXT, maxTokens: bedrock.maxTokens, temperature: bedrock.temperature };
}
