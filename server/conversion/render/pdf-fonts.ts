import { createRequire } from 'node:module';
import path from 'node:path';
import { openSync, type Font } from 'fontkit';

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

const DEJAVU = path.join(packageDir('dejavu-fonts-ttf'), 'ttf');

/** The tagged PDF's own faces: DejaVu covers Latin, Greek, Cyrillic, Hebrew and most Arabic. */
export const FONTS = {
  regular: path.join(DEJAVU, 'DejaVuSans.ttf'),
  bold: path.join(DEJAVU, 'DejaVuSans-Bold.ttf'),
  italic: path.join(DEJAVU, 'DejaVuSans-Oblique.ttf'),
  boldItalic: path.join(DEJAVU, 'DejaVuSans-BoldOblique.ttf'),
  mono: path.join(DEJAVU, 'DejaVuSansMono.ttf'),
} as const;

export type FontStyle = keyof typeof FONTS;

type Family = { regular: string; bold: string };

function noto(pkg: string, family: string): Family {
  const dir = packageDir(`@expo-google-fonts/${pkg}`);
  return { regular: path.join(dir, '400Regular', `${family}_400Regular.ttf`), bold: path.join(dir, '700Bold', `${family}_700Bold.ttf`) };
}

// Han characters are shared by the three languages but drawn differently in each, so the
// text's language picks which face is asked first.
const CJK = { ko: noto('noto-sans-kr', 'NotoSansKR'), ja: noto('noto-sans-jp', 'NotoSansJP'), zh: noto('noto-sans-sc', 'NotoSansSC') };
// Noto Sans Arabic is for the letters DejaVu lacks (Urdu's ے and ہ among them).
const OTHERS = [noto('noto-sans-arabic', 'NotoSansArabic'), noto('noto-sans-thai', 'NotoSansThai'), noto('noto-sans-devanagari', 'NotoSansDevanagari')];

function cjkFamilies(lang: string | undefined): Family[] {
  switch (lang?.split('-')[0]?.toLowerCase()) {
    case 'ko':
      return [CJK.ko, CJK.ja, CJK.zh];
    case 'ja':
      return [CJK.ja, CJK.zh, CJK.ko];
    default:
      // Simplified Chinese covers the most Han characters, and Traditional ones too (no separate TC face).
      return [CJK.zh, CJK.ja, CJK.ko];
  }
}

/** What a face can draw and how tall it is, in thousandths of the font size (as pdfkit measures). */
export type FaceInfo = { chars: Set<number>; ascender: number; descender: number; lineGap: number };

/** fontkit faces by file, read once per process and only when asked for, so a document that never needs a CJK face never reads one. */
const faces = new Map<string, Font>();
const infos = new Map<string, FaceInfo>();

function face(file: string): Font {
  let font = faces.get(file);
  if (!font) {
    font = openSync(file) as Font;
    faces.set(file, font);
  }
  return font;
}

export function faceInfo(file: string): FaceInfo {
  let info = infos.get(file);
  if (!info) {
    const font = face(file);
    const scale = 1000 / font.unitsPerEm;
    info = { chars: new Set(font.characterSet), ascender: font.ascent * scale, descender: font.descent * scale, lineGap: font.lineGap * scale };
    infos.set(file, info);
  }
  return info;
}

function covers(file: string, text: string): boolean {
  const { chars } = faceInfo(file);
  for (const ch of text) if (!chars.has(ch.codePointAt(0)!)) return false;
  return true;
}

const CLASSES: [RegExp, string][] = [
  [/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u, 'cjk'],
  [/\p{Script=Arabic}/u, 'arabic'],
  [/\p{Script=Hebrew}/u, 'hebrew'],
  [/\p{Script=Thai}/u, 'thai'],
  [/\p{Script=Devanagari}/u, 'devanagari'],
];
const INHERITED = /\p{Script=Inherited}/u;
const COMMON = /\p{Script=Common}/u;

/** The script a character belongs to, as far as choosing a face goes; undefined for spaces, digits and punctuation. */
function scriptClass(ch: string): string | undefined {
  if (COMMON.test(ch)) return undefined;
  for (const [pattern, name] of CLASSES) if (pattern.test(ch)) return name;
  return 'other';
}

/** Faces to try, best first: the style's own, then DejaVu's upright face, then Noto by script. */
function candidates(style: FontStyle, cls: string | undefined, lang: string | undefined): string[] {
  const bold = style === 'bold' || style === 'boldItalic';
  const cjk = cjkFamilies(lang);
  const families = cls === 'cjk' ? [...cjk, ...OTHERS] : [...OTHERS, ...cjk];
  return [...new Set([FONTS[style], bold ? FONTS.bold : FONTS.regular, ...families.map((f) => (bold ? f.bold : f.regular))])];
}

function firstCovering(list: string[], text: string): string | undefined {
  return list.find((file) => covers(file, text));
}

export type FontRun = { text: string; font: string };

/**
 * Splits text into runs each drawn by one face. A word of one script keeps one face when
 * any face has all of it (Arabic letters only join within a face); spaces and punctuation
 * stay with a neighbour's face when it has them, so runs do not split at every space.
 */
export function fontRuns(text: string, style: FontStyle, lang?: string): FontRun[] {
  type Segment = { text: string; cls: string | undefined; font?: string };
  const segments: Segment[] = [];
  for (const ch of text) {
    const last = segments.at(-1);
    // Combining marks (Inherited) belong to the character before them.
    const cls = last && INHERITED.test(ch) ? last.cls : scriptClass(ch);
    if (last && last.cls === cls) last.text += ch;
    else segments.push({ text: ch, cls });
  }
  const out: FontRun[] = [];
  const push = (part: string, font: string) => {
    const last = out.at(-1);
    if (last && last.font === font) last.text += part;
    else out.push({ text: part, font });
  };
  for (const segment of segments) {
    if (segment.cls === undefined) continue;
    segment.font = firstCovering(candidates(style, segment.cls, lang), segment.text);
  }
  segments.forEach((segment, i) => {
    const list = candidates(style, segment.cls, lang);
    if (segment.font) return push(segment.text, segment.font);
    if (segment.cls !== undefined) {
      // No face has the whole word: each character takes the first face that has it.
      for (const ch of segment.text) push(ch, firstCovering(list, ch) ?? FONTS[style]);
      return;
    }
    const near = [out.at(-1)?.font, segments[i + 1]?.font].filter((f): f is string => f !== undefined);
    for (const ch of segment.text) push(ch, firstCovering([...near, ...list], ch) ?? FONTS[style]);
  });
  return out;
}

// fontkit reverses a shaped run when the first character with a script of its own is in one
// of these; layout must know to undo or rely on that.
const RTL_SCRIPT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}]/u;
const RTL_MARKS = /[\u200f\u202b\u202e\u2067]/;

export function fontkitReverses(text: string): boolean {
  for (const ch of text) if (!COMMON.test(ch) && !INHERITED.test(ch)) return RTL_SCRIPT.test(ch);
  return false;
}

function hasRtl(text: string): boolean {
  return RTL_SCRIPT.test(text) || RTL_MARKS.test(text);
}

// Scripts whose glyphs are reordered or split against the text (Devanagari's short i is drawn
// before its consonant, Thai's sara am is drawn as two glyphs).
const REORDERED = /[\p{Script=Devanagari}\p{Script=Thai}]/u;

/**
 * Whether extracting the drawn glyphs would not give back the text: right-to-left text, drawn in
 * visual order, and scripts whose glyphs are reordered. Such text carries its logical form in /ActualText.
 */
export function needsActualText(text: string): boolean {
  return hasRtl(text) || REORDERED.test(text);
}

/** Whether pdfkit's own left-to-right layout in the style's DejaVu face would draw this text wrongly or with missing glyphs. */
export function needsScriptLayout(text: string, style: FontStyle): boolean {
  if (/^[\x00-\x7e]*$/.test(text)) return false;
  return hasRtl(text) || !covers(FONTS[style], text.replace(/\n/g, ''));
}

/** A shaped word as pdfkit reads it: its glyphs, their positions in thousandths of the size, and its advance. */
type ShapedWord = { glyphs: unknown[]; positions: unknown[]; advanceWidth: number };
/** pdfkit's embedded font, as far as its word layouts go */
type EmbeddedFont = { layoutRun(text: string): ShapedWord; layoutCached(text: string): ShapedWord };

/**
 * Words shaped by a face, kept across documents. pdfkit shapes each word (OpenType substitution
 * and positioning, fontkit in JavaScript) the first time a document measures it, and drawing the
 * tagged PDF spent most of its time there: 1.4 of 3.8 s on the corpus. A shaped word depends only
 * on the face and the text (sizes scale it later), and pdfkit reads it without changing it.
 */
const shapedWords = new Map<string, Map<string, ShapedWord>>();
/**
 * Words a face keeps for the documents after, before its store starts again: a shaped word holds about 2.4 kB
 * (its glyphs and their positions), so a face's store stays under 5 MB. A document keeps every word it shaped
 * until it is drawn, as pdfkit does.
 */
const SHARED_WORDS_PER_FACE = 2_000;

function shareShapedWords(font: EmbeddedFont, file: string): void {
  const store = shapedWords.get(file) ?? new Map<string, ShapedWord>();
  shapedWords.set(file, store);
  const own = new Map<string, ShapedWord>();
  font.layoutCached = (text: string) => {
    let word = own.get(text);
    if (word) return word;
    word = store.get(text);
    if (!word) {
      const { glyphs, positions, advanceWidth } = font.layoutRun(text);
      word = { glyphs, positions, advanceWidth };
      if (store.size >= SHARED_WORDS_PER_FACE) store.clear();
      store.set(text, word);
    }
    own.set(text, word);
    return word;
  };
}

/**
 * Makes the document draw with faces parsed once per process. pdfkit opens a
 * font file anew for every document, and decoding a face's layout tables cost
 * more than drawing a short document; a fontkit face only caches what it
 * decodes, so documents can share it, and the words it has shaped with it.
 * Each document still embeds its own subset.
 */
export function shareFaces(doc: PDFKit.PDFDocument): void {
  const select = doc.font.bind(doc) as (src: string, ...rest: unknown[]) => PDFKit.PDFDocument;
  const registered = new Set<string>();
  doc.font = ((src: unknown, ...rest: unknown[]) => {
    if (typeof src === 'string' && path.isAbsolute(src) && !registered.has(src)) {
      // pdfkit takes a fontkit face where it takes a file (it checks for a layout method)
      doc.registerFont(src, face(src) as never);
      registered.add(src);
      const selected = select(src, ...rest);
      shareShapedWords((doc as unknown as { _font: EmbeddedFont })._font, src);
      return selected;
    }
    return select(src as string, ...rest);
  }) as typeof doc.font;
}
