import type { Block, PageResult } from './model.ts';
import { blocksText } from './page-content.ts';

/**
 * Heading levels for a whole document whose headings were inferred from the
 * page (untagged local pages), not given by its author: a page alone cannot
 * know whether its biggest line is a chapter or a subsection. Section
 * numbering decides first ("Part II" > "Chapter 3" > "1" > "1.1" > "1.3.1",
 * Docling's and the layout notes' order); headings without a number take the
 * level of the numbered headings set in the same style, else a level from
 * the document's own hierarchy of heading styles (bigger first, bold before
 * regular at one size).
 */

type Level = 1 | 2 | 3 | 4 | 5 | 6;
type HeadingStyle = { size: number; bold: boolean };
type Heading = Extract<Block, { kind: 'heading' }>;

/** Depth of a heading's section number: "Chapter 2" 1, "3" 1, "3.2" 2, "3.2.1" 3, "A.1" 2; undefined when it has none. */
export function numberingDepth(text: string): { depth: number; family: 'part' | 'chapter' | 'dotted' } | undefined {
  const trimmed = text.trim();
  if (/^(part|teil|partie)\s+([IVXLC]+|\d+)\b/i.test(trimmed)) return { depth: 1, family: 'part' };
  if (/^(chapter|kapitel|chapitre|cap[ií]tulo|appendix|anhang|annexe)\s+([IVXLC]+|\d+|[A-Z])\b/i.test(trimmed)) return { depth: 1, family: 'chapter' };
  // the title opens with a capital or a letter of a script without case (Hangul, CJK, Arabic)
  const dotted = /^((?:\d{1,2}|[A-Z])(?:\.\d{1,2}){0,5})\.?\s+[\p{Lu}\p{Lo}]/u.exec(trimmed);
  if (!dotted) return undefined;
  const parts = dotted[1]!.split('.');
  // a lone capital letter is a word ("A Study of…"), not a section number, unless it has sub-numbers (A.1)
  if (parts.length === 1 && /^[A-Z]$/.test(parts[0]!)) return undefined;
  return { depth: parts.length, family: 'dotted' };
}

const styleKey = (style: HeadingStyle) => `${Math.round(style.size * 2) / 2}:${style.bold ? 'b' : 'r'}`;

export type DocumentHeadings = {
  /** remembers one page's headings (call in page order) */
  add(page: PageResult): void;
  /** the level each heading of a page gets, in block order (nested headings included) */
  levelsOf(page: PageResult): Level[];
};

/**
 * Collects the headings of a document page by page, then gives each its
 * document-wide level. `inferred` false (a tagged source, a model that read
 * the page) keeps every level as the backend gave it.
 */
export function createDocumentHeadings(inferred: boolean): DocumentHeadings {
  const numberedStyles = new Map<string, number[]>();
  const styles = new Map<string, HeadingStyle>();
  const uses = new Map<string, number>();
  // the style of the line that opens the document, before any text: its title when no other heading shares that style
  let opening: string | undefined;
  let pagesSeen = 0;
  let families = new Set<string>();
  const visit = (blocks: Block[], each: (heading: Heading) => void) => {
    for (const block of blocks) {
      if (block.kind === 'heading') each(block);
      else if (block.kind === 'blockquote') visit(block.children, each);
    }
  };
  let plan: Map<string, Level> | undefined;
  // the style of the document's title, a heading of its own that heads every other, numbered ones too
  let titleStyle: string | undefined;
  const settle = () => {
    if (plan) return plan;
    titleStyle = opening !== undefined && uses.get(opening) === 1 && !numberedStyles.has(opening) ? opening : undefined;
    // numbered styles first: a style used for depth-d numbers is level d (the commonest depth wins), under the title
    plan = new Map<string, Level>();
    for (const [key, depths] of numberedStyles) {
      const counts = new Map<number, number>();
      for (const depth of depths) counts.set(depth, (counts.get(depth) ?? 0) + 1);
      const depth = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
      plan.set(key, clamp(depth + (titleStyle ? 1 : 0)));
    }
    // the other styles by prominence; each goes just under the deepest numbered style more prominent than it
    const ranked = [...styles.entries()].sort((a, b) => b[1].size - a[1].size || Number(b[1].bold) - Number(a[1].bold));
    // a title set smaller than its sections (a bold body-size title over bigger bold headings) still heads them all
    const title = titleStyle ? ranked.findIndex(([key]) => key === titleStyle) : -1;
    if (title > 0) ranked.unshift(...ranked.splice(title, 1));
    let last = 0;
    for (const [key] of ranked) {
      const known = plan.get(key);
      if (known !== undefined) {
        last = known;
        continue;
      }
      last = Math.min(6, last + 1);
      plan.set(key, clamp(last));
    }
    return plan;
  };
  // a heading without a style (its backend did not say how it is set) keeps its own level unless it is numbered
  const styleOf = (heading: Heading): HeadingStyle | undefined => heading.style;
  const ours = (page: PageResult) => inferred && page.backend === 'local';
  return {
    add(page) {
      if (!ours(page)) return;
      plan = undefined;
      pagesSeen++;
      if (pagesSeen === 1) {
        const first = page.blocks.find((block) => block.kind === 'heading' || block.kind === 'paragraph' || block.kind === 'list');
        if (first?.kind === 'heading' && first.style) opening = styleKey(first.style);
        else {
          // a journal's masthead lines may stand over its title: the first heading, none of the page's bigger, not
          // numbered, over numbered sections ("1. Introduction"), which would otherwise take its level
          const headings = page.blocks.filter((block): block is Heading => block.kind === 'heading');
          const [title, ...rest] = headings;
          if (
            title?.style &&
            numberingDepth(blocksText([title])) === undefined &&
            rest.some((heading) => numberingDepth(blocksText([heading])) !== undefined) &&
            rest.every((heading) => (heading.style?.size ?? 0) <= title.style!.size)
          )
            opening = styleKey(title.style);
        }
      }
      visit(page.blocks, (heading) => {
        const style = styleOf(heading);
        const numbering = numberingDepth(blocksText([heading]));
        if (numbering) families = new Set([...families, numbering.family]);
        if (!style) return;
        const key = styleKey(style);
        styles.set(key, style);
        uses.set(key, (uses.get(key) ?? 0) + 1);
        if (numbering?.family === 'dotted') numberedStyles.set(key, [...(numberedStyles.get(key) ?? []), numbering.depth]);
      });
    },
    levelsOf(page) {
      const levels: Level[] = [];
      if (!ours(page)) {
        visit(page.blocks, (heading) => levels.push(heading.level));
        return levels;
      }
      const levelByStyle = settle();
      // a part is above chapters; "Chapter 1" and "1" are the same depth (its sections are "1.1", "1.2"); the title
      // heads them all, and the plan has it above the styles without numbers already
      const parts = families.has('part') ? 1 : 0;
      const titled = titleStyle ? 1 : 0;
      visit(page.blocks, (heading) => {
        const numbering = numberingDepth(blocksText([heading]));
        const style = styleOf(heading);
        if (style && styleKey(style) === titleStyle) levels.push(1);
        else if (numbering?.family === 'part') levels.push(clamp(1 + titled));
        else if (numbering) levels.push(clamp(numbering.depth + parts + titled));
        else levels.push(style ? clamp((levelByStyle.get(styleKey(style)) ?? heading.level) + parts) : heading.level);
      });
      return levels;
    },
  };
}

function clamp(level: number): Level {
  return Math.min(6, Math.max(1, Math.round(level))) as Level;
}

/** The page with its headings at the levels given, in block order. */
export function withHeadingLevels(page: PageResult, levels: Level[]): PageResult {
  let index = 0;
  const walk = (blocks: Block[]): Block[] =>
    blocks.map((block) => {
      if (block.kind === 'heading') return { ...block, level: levels[index++] ?? block.level };
      if (block.kind === 'blockquote') return { ...block, children: walk(block.children) };
      return block;
    });
  return { ...page, blocks: walk(page.blocks) };
}
