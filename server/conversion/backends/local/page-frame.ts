import type { Box } from './images.ts';
import type { TextItem } from './text-layer.ts';

/**
 * The frame an untagged page is read in: page space moved to the crop box's
 * corner and, where the text runs up or down the page, turned a quarter so
 * that it runs left to right. A landscape page is most often a portrait page
 * with /Rotate 90 and its text drawn turned against it (Word's and
 * Distiller's landscape sections, a map with its title block): read in page
 * space, every line of it is upright and the page is a pile of one-word
 * columns. Everything the layout reads (text, glyphs, rules, marks, images,
 * links, fields) is put in this one frame.
 */
export type PageFrame = {
  /** quarter turns (counter-clockwise) of the text's baseline from page space's x axis; 0, 1 or 3 */
  turn: 0 | 1 | 3;
  width: number;
  height: number;
  point(x: number, y: number): { x: number; y: number };
  box<T extends Box>(box: T): T;
  /** a box in the frame back in page space */
  pageBox<T extends Box>(box: T): T;
  item(item: TextItem): TextItem;
};

/** The share of a page's text that must run one way for the page to be read turned. */
const TURNED_SHARE = 0.6;

export function pageFrame(view: { x0: number; y0: number; x1: number; y1: number }, items: TextItem[]): PageFrame {
  const turn = textTurn(items);
  const { x0, y0 } = view;
  const pageWidth = view.x1 - x0;
  const pageHeight = view.y1 - y0;
  // most pages: page space as it is; boxes are not copied, items are (the layout's passes rewrite their own)
  if (turn === 0 && x0 === 0 && y0 === 0) {
    const same = <T>(value: T) => value;
    return { turn, width: pageWidth, height: pageHeight, point: (x, y) => ({ x, y }), box: same, pageBox: same, item: (item) => ({ ...item }) };
  }
  const point =
    turn === 1
      ? (x: number, y: number) => ({ x: y - y0, y: pageWidth - (x - x0) })
      : turn === 3
        ? (x: number, y: number) => ({ x: pageHeight - (y - y0), y: x - x0 })
        : (x: number, y: number) => ({ x: x - x0, y: y - y0 });
  const unpoint =
    turn === 1
      ? (x: number, y: number) => ({ x: pageWidth - y + x0, y: x + y0 })
      : turn === 3
        ? (x: number, y: number) => ({ x: y + x0, y: pageHeight - x + y0 })
        : (x: number, y: number) => ({ x: x + x0, y: y + y0 });
  const boxThrough = (map: typeof point, box: Box): Box => {
    const a = map(box.x0, box.y0);
    const b = map(box.x1, box.y1);
    return { x0: Math.min(a.x, b.x), y0: Math.min(a.y, b.y), x1: Math.max(a.x, b.x), y1: Math.max(a.y, b.y) };
  };
  return {
    turn,
    width: turn === 0 ? pageWidth : pageHeight,
    height: turn === 0 ? pageHeight : pageWidth,
    point,
    box: <T extends Box>(box: T): T => ({ ...box, ...boxThrough(point, box) }),
    pageBox: <T extends Box>(box: T): T => ({ ...box, ...boxThrough(unpoint, box) }),
    item: (item) => {
      const at = point(item.x, item.y);
      if (turn === 0) return { ...item, ...at };
      // in the turned frame, the page's level lines are the ones set at an angle
      const quarter = ((item.quarter ?? 0) - turn + 4) % 4;
      const { quarter: _quarter, rotated: _rotated, ...rest } = item;
      return { ...rest, ...at, ...(quarter !== 0 ? { rotated: true } : {}), ...(quarter === 1 || quarter === 3 ? { quarter } : {}) };
    },
  };
}

/** The way most of the page's letters run: 0 level, 1 up the page, 3 down it. */
function textTurn(items: TextItem[]): 0 | 1 | 3 {
  if (!items.some((item) => item.quarter)) return 0;
  const letters = [0, 0, 0, 0];
  for (const item of items) letters[item.quarter ?? 0]! += item.text.length;
  const total = letters.reduce((sum, count) => sum + count, 0);
  if (total === 0) return 0;
  if (letters[1]! > total * TURNED_SHARE) return 1;
  if (letters[3]! > total * TURNED_SHARE) return 3;
  return 0;
}
