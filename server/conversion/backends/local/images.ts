import { OPS, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { encodeRgbPng } from './png.ts';
import type { Canvas } from '@napi-rs/canvas';
import type { Block } from '../../model.ts';
import { MAX_IMAGE_SIDE, type StoredJpeg } from './pdf-bytes.ts';

/**
 * The images a page paints, where it paints them, and their pixels encoded
 * for the document model. pdf.js's operator list says which image is drawn
 * under which transform and inside which marked content (MCID); on Node it
 * hands the decoded pixels over as `{ width, height, kind, data }` (no
 * ImageBitmap without OffscreenCanvas), which @napi-rs/canvas encodes.
 */

export type FigureImage = NonNullable<Extract<Block, { kind: 'figure' }>['image']>;

/** One paint of an image: its box in page space (origin bottom-left, y up) and what it is inside. */
export type PlacedImage = {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  /** every marked-content id (MCID) the paint is nested in, innermost last */
  mcids: number[];
  /** inside an /Artifact: page furniture, never a figure */
  artifact: boolean;
  /** pixel size of the image as stored */
  pixelWidth: number;
  pixelHeight: number;
  /** stencil mask (painted in the fill colour) rather than an image with colours */
  mask: boolean;
  source: { objId: string } | { inline: RawImage };
};

type RawImage = { width: number; height: number; kind?: number; data?: Uint8Array | Uint8ClampedArray | null };

/** Images fewer pixels than this on a side are bullets, rules and specks. */
export const MIN_IMAGE_PIXELS = 24;
/** Per page: a catalogue page of thumbnails must not blow up the chunk's stored result. */
export const MAX_IMAGES_PER_PAGE = 16;
export const MAX_IMAGE_BASE64_PER_PAGE = 4 * 1024 * 1024;
/** Above this PNG size an opaque image (a photo) is tried as JPEG, which is far smaller for photographs. */
const JPEG_TRY_BYTES = 200 * 1024;
/** Decoding a huge image to RGBA at full size costs width×height×4 bytes: subsample first beyond this. */
const MAX_DECODE_PIXELS = (MAX_IMAGE_SIDE * 2) ** 2;

/** pdf.js ImageKind */
const GRAYSCALE_1BPP = 1;
const RGB_24BPP = 2;
const RGBA_32BPP = 3;

type OperatorList = { fnArray: number[]; argsArray: unknown[][] };

export type Box = { x0: number; y0: number; x1: number; y1: number };

/**
 * Every image paint of an operator list, with its box under the transform in
 * force and its marked-content nesting; and, per MCID, the extent of the
 * vector paths drawn inside it (a figure's frame and leader lines).
 */
export function placeImages(list: OperatorList): PlacedImage[] & { pathExtents: Map<number, Box> } {
  const found = [] as unknown as PlacedImage[] & { pathExtents: Map<number, Box> };
  found.pathExtents = new Map();
  const stack: number[][] = [];
  let ctm = [1, 0, 0, 1, 0, 0];
  const marked: { mcid?: number; artifact: boolean }[] = [];
  for (let index = 0; index < list.fnArray.length; index++) {
    const op = list.fnArray[index];
    const args = list.argsArray[index] ?? [];
    if (op === OPS.save) stack.push(ctm);
    else if (op === OPS.restore) ctm = stack.pop() ?? [1, 0, 0, 1, 0, 0];
    else if (op === OPS.transform) {
      const [a, b, c, d, e, f] = args as number[];
      const [A, B, C, D, E, F] = ctm as [number, number, number, number, number, number];
      ctm = [a! * A + b! * C, a! * B + b! * D, c! * A + d! * C, c! * B + d! * D, e! * A + f! * C + E, e! * B + f! * D + F];
    } else if (op === OPS.beginMarkedContentProps || op === OPS.beginMarkedContent) {
      const tag = args[0];
      const mcid = op === OPS.beginMarkedContentProps && typeof args[1] === 'number' ? args[1] : undefined;
      marked.push({ mcid, artifact: tag === 'Artifact' || (marked.at(-1)?.artifact ?? false) });
    } else if (op === OPS.endMarkedContent) marked.pop();
    else if (op === OPS.constructPath && marked.length > 0 && args[0] !== OPS.endPath) {
      // a path ended without painting is a clip, often the whole page: only painted paths count
      const minMax = args[2] as ArrayLike<number> | null | undefined;
      if (!minMax || minMax.length < 4 || !Number.isFinite(minMax[0]!) || minMax[0]! > minMax[2]!) continue;
      const [a, b, c, d, e, f] = ctm as [number, number, number, number, number, number];
      const corners = [
        [minMax[0]!, minMax[1]!],
        [minMax[2]!, minMax[1]!],
        [minMax[0]!, minMax[3]!],
        [minMax[2]!, minMax[3]!],
      ].map(([x, y]) => [a * x! + c * y! + e, b * x! + d * y! + f] as const);
      const box = {
        x0: Math.min(...corners.map((p) => p[0])),
        y0: Math.min(...corners.map((p) => p[1])),
        x1: Math.max(...corners.map((p) => p[0])),
        y1: Math.max(...corners.map((p) => p[1])),
      };
      for (const entry of marked) {
        if (entry.mcid === undefined) continue;
        const known = found.pathExtents.get(entry.mcid);
        found.pathExtents.set(
          entry.mcid,
          known ? { x0: Math.min(known.x0, box.x0), y0: Math.min(known.y0, box.y0), x1: Math.max(known.x1, box.x1), y1: Math.max(known.y1, box.y1) } : box,
        );
      }
    } else if (op === OPS.paintImageXObject || op === OPS.paintInlineImageXObject || op === OPS.paintImageMaskXObject) {
      // the image is the unit square under the CTM
      const [a, b, c, d, e, f] = ctm as [number, number, number, number, number, number];
      const xs = [e, a + e, c + e, a + c + e];
      const ys = [f, b + f, d + f, b + d + f];
      const inline = op === OPS.paintImageXObject ? undefined : (args[0] as RawImage | undefined);
      const pixelWidth = op === OPS.paintImageXObject ? Number(args[1]) : Number(inline?.width ?? 0);
      const pixelHeight = op === OPS.paintImageXObject ? Number(args[2]) : Number(inline?.height ?? 0);
      if (op === OPS.paintImageXObject ? typeof args[0] !== 'string' : !inline) continue;
      found.push({
        x0: Math.min(...xs),
        y0: Math.min(...ys),
        x1: Math.max(...xs),
        y1: Math.max(...ys),
        mcids: marked.flatMap((entry) => (entry.mcid === undefined ? [] : [entry.mcid])),
        artifact: marked.at(-1)?.artifact ?? false,
        pixelWidth,
        pixelHeight,
        mask: op === OPS.paintImageMaskXObject,
        source: op === OPS.paintImageXObject ? { objId: args[0] as string } : { inline: inline! },
      });
    }
  }
  return found;
}

/** How long to wait for pdf.js to deliver an image's pixels (decoding runs on its side, after the operator list). */
const IMAGE_WAIT_MS = 10_000;

/** The pixels pdf.js decoded for a paint, or undefined when it has none for it (a failed decode). */
async function rawImage(page: PDFPageProxy, image: PlacedImage): Promise<RawImage | undefined> {
  if ('inline' in image.source) return image.source.inline;
  const { objId } = image.source;
  const store = (objId.startsWith('g_') ? page.commonObjs : page.objs) as unknown as { get(id: string, callback: (data: unknown) => void): void };
  let timer: NodeJS.Timeout | undefined;
  try {
    // the operator list can arrive before the image is decoded: the callback form waits for it
    const data = (await Promise.race([
      new Promise<unknown>((resolve) => store.get(objId, resolve)),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), IMAGE_WAIT_MS);
      }),
    ])) as RawImage | null | undefined;
    return data && typeof data.width === 'number' && data.data ? data : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * RGBA pixels of a decoded image, subsampled (nearest pixel) by an integer
 * step when it is huge, so one 10,000-pixel scan cannot take a gigabyte.
 */
function toRgba(raw: RawImage, mask: boolean): { data: Uint8ClampedArray; width: number; height: number; opaque: boolean } | undefined {
  const { width, height, data } = raw;
  if (!data || width < 1 || height < 1) return undefined;
  const step = Math.max(1, Math.ceil(Math.sqrt((width * height) / MAX_DECODE_PIXELS)));
  const outWidth = Math.ceil(width / step);
  const outHeight = Math.ceil(height / step);
  const out = new Uint8ClampedArray(outWidth * outHeight * 4);
  const kind = mask ? GRAYSCALE_1BPP : raw.kind;
  const rowBytes = (width + 7) >> 3;
  let opaque = true;
  for (let y = 0, o = 0; y < outHeight; y++) {
    const sy = y * step;
    for (let x = 0; x < outWidth; x++, o += 4) {
      const sx = x * step;
      if (kind === GRAYSCALE_1BPP) {
        const bit = (data[sy * rowBytes + (sx >> 3)]! >> (7 - (sx & 7))) & 1;
        // pdf.js: in an image a set bit is white; in a stencil mask a clear bit is painted (drawn here in black)
        const value = bit ? 255 : 0;
        out[o] = out[o + 1] = out[o + 2] = value;
        out[o + 3] = 255;
      } else if (kind === RGB_24BPP) {
        const i = (sy * width + sx) * 3;
        out[o] = data[i]!;
        out[o + 1] = data[i + 1]!;
        out[o + 2] = data[i + 2]!;
        out[o + 3] = 255;
      } else if (kind === RGBA_32BPP) {
        const i = (sy * width + sx) * 4;
        out[o] = data[i]!;
        out[o + 1] = data[i + 1]!;
        out[o + 2] = data[i + 2]!;
        out[o + 3] = data[i + 3]!;
        if (data[i + 3]! < 255) opaque = false;
      } else {
        return undefined;
      }
    }
  }
  return { data: out, width: outWidth, height: outHeight, opaque };
}

/** Each edge band this share of its side wide is left out when a picture is judged uniform. */
const FRAME_SHARE = 0.1;

/**
 * Whether every pixel inside the picture's edge bands is (nearly) the same colour: a tint box or a rule, or a frame
 * whose only ink is at its edges (a card's drop shadow or border painted as an image), not a picture.
 */
function isUniform({ data, width, height }: { data: Uint8ClampedArray; width: number; height: number }): boolean {
  const [left, top] = [Math.floor(width * FRAME_SHARE), Math.floor(height * FRAME_SHARE)];
  const first = (top * width + left) * 4;
  if (first + 2 >= data.length) return true;
  const [r, g, b] = [data[first]!, data[first + 1]!, data[first + 2]!];
  for (let row = top; row < height - top; row++) {
    // every seventh pixel, the rows' starts staggered so that a thin upright line is met too
    for (let column = left + (row % 7); column < width - left; column += 7) {
      const i = (row * width + column) * 4;
      if (Math.abs(data[i]! - r) > 8 || Math.abs(data[i + 1]! - g) > 8 || Math.abs(data[i + 2]! - b) > 8) return false;
    }
  }
  return true;
}

/**
 * A painted image encoded for the model: the JPEG the file stores for it, as
 * it is, when that is the picture pdf.js decoded (`jpegs`: storedJpegs);
 * else PNG, or JPEG when that is much smaller for an opaque picture, at most
 * MAX_IMAGE_SIDE on its long side. Undefined when pdf.js has no pixels for it.
 */
export async function encodeImage(page: PDFPageProxy, image: PlacedImage, jpegs: StoredJpeg[] = []): Promise<(FigureImage & { uniform: boolean }) | undefined> {
  const raw = await rawImage(page, image);
  if (!raw) return undefined;
  const rgba = toRgba(raw, image.mask);
  if (!rgba) return undefined;
  const stored = image.mask || !rgba.opaque ? undefined : await storedJpegOf(rgba, jpegs);
  if (stored) return { mime: 'image/jpeg', base64: stored.toString('base64'), width: rgba.width, height: rgba.height, uniform: isUniform(rgba) };
  const { createCanvas } = await import('@napi-rs/canvas');
  const source = createCanvas(rgba.width, rgba.height);
  const sourceContext = source.getContext('2d');
  const imageData = sourceContext.createImageData(rgba.width, rgba.height);
  imageData.data.set(rgba.data);
  sourceContext.putImageData(imageData, 0, 0);
  const scale = Math.min(1, MAX_IMAGE_SIDE / Math.max(rgba.width, rgba.height));
  let canvas = source;
  if (scale < 1) {
    canvas = createCanvas(Math.max(1, Math.round(rgba.width * scale)), Math.max(1, Math.round(rgba.height * scale)));
    const context = canvas.getContext('2d');
    context.imageSmoothingEnabled = true;
    context.imageSmoothingQuality = 'high';
    context.drawImage(source, 0, 0, canvas.width, canvas.height);
  }
  return { ...(await encodeCanvas(canvas, rgba.opaque)), uniform: isUniform(rgba) };
}

/** Mean difference (0–255, per channel) between two decoders' pixels of one JPEG; another picture differs by tens. */
const SAME_JPEG_MEAN_DIFFERENCE = 6;
/** Pixels compared per candidate: spread over the picture, enough to tell two photographs of one size apart. */
const JPEG_SAMPLES = 4096;

/**
 * The stored JPEG that decodes to the pixels pdf.js decoded, when there is one: the candidates of the
 * same size are decoded and compared, as a document's photographs often share a size. Re-encoding a
 * JPEG costs a PNG encode and a JPEG encode, and loses quality; its own bytes cost a decode.
 */
async function storedJpegOf(rgba: { data: Uint8ClampedArray; width: number; height: number }, jpegs: StoredJpeg[]): Promise<Buffer | undefined> {
  const candidates = jpegs.filter((jpeg) => jpeg.width === rgba.width && jpeg.height === rgba.height);
  if (candidates.length === 0) return undefined;
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  const pixels = rgba.width * rgba.height;
  const step = Math.max(1, Math.floor(pixels / JPEG_SAMPLES));
  for (const jpeg of candidates) {
    const decoded = await loadImage(jpeg.bytes).catch(() => undefined);
    if (!decoded || decoded.width !== rgba.width || decoded.height !== rgba.height) continue;
    const canvas = createCanvas(rgba.width, rgba.height);
    const context = canvas.getContext('2d');
    context.drawImage(decoded, 0, 0);
    const theirs = context.getImageData(0, 0, rgba.width, rgba.height).data;
    let difference = 0;
    let samples = 0;
    for (let pixel = 0; pixel < pixels; pixel += step, samples++) {
      const o = pixel * 4;
      difference += Math.abs(theirs[o]! - rgba.data[o]!) + Math.abs(theirs[o + 1]! - rgba.data[o + 1]!) + Math.abs(theirs[o + 2]! - rgba.data[o + 2]!);
    }
    if (difference / (samples * 3) <= SAME_JPEG_MEAN_DIFFERENCE) return jpeg.bytes;
  }
  return undefined;
}

/** Resolution of a figure drawn from several pieces: screen quality, a quarter of OCR's pixels. */
const FIGURE_RENDER_DPI = 150;
/**
 * The most pixels one shared render of a page's figures may span (OCR's page at most). The canvas is
 * native memory (Skia), which neither the worker's heap limit nor its memory watch sees: two small
 * figures in opposite corners of a 14,400-point page spanned 400 megapixels, 1.6 GB. Past this each
 * figure is rendered alone, at most MAX_IMAGE_SIDE on its long side.
 */
const MAX_SHARED_RENDER_PIXELS = 4500 * 4500;

/**
 * Regions of the page rendered to PNG (a figure assembled from several image
 * pieces and vector drawing, which no single image holds), from one
 * rendering of the area they span: pdf.js runs the whole page's drawing for
 * every render, whatever the canvas shows, as the page shows (turned by its
 * /Rotate). Undefined for regions off the page.
 */
export async function renderRegions(page: PDFPageProxy, boxes: Box[]): Promise<(FigureImage | undefined)[]> {
  const [vx0 = 0, vy0 = 0, vx1 = 612, vy1 = 792] = page.view;
  const clipped = boxes.map((box) => ({ x0: Math.max(box.x0, vx0), y0: Math.max(box.y0, vy0), x1: Math.min(box.x1, vx1), y1: Math.min(box.y1, vy1) }));
  const usable = clipped.filter((box) => box.x1 - box.x0 >= 1 && box.y1 - box.y0 >= 1);
  if (usable.length === 0) return boxes.map(() => undefined);
  const scale = Math.min(FIGURE_RENDER_DPI / 72, ...usable.map((box) => MAX_IMAGE_SIDE / Math.max(box.x1 - box.x0, box.y1 - box.y0)));
  const all = {
    x0: Math.min(...usable.map((box) => box.x0)),
    y0: Math.min(...usable.map((box) => box.y0)),
    x1: Math.max(...usable.map((box) => box.x1)),
    y1: Math.max(...usable.map((box) => box.y1)),
  };
  if (usable.length > 1 && (all.x1 - all.x0) * (all.y1 - all.y0) * scale * scale > MAX_SHARED_RENDER_PIXELS) {
    const alone: (FigureImage | undefined)[] = [];
    for (const box of boxes) alone.push((await renderRegions(page, [box]))[0]);
    return alone;
  }
  // the page's viewport (its /Rotate included) places a box on the device; the area's corner is moved to 0,0
  const viewport = page.getViewport({ scale });
  const onDevice = (box: Box) => {
    const [a = 0, b = 0] = viewport.convertToViewportPoint(box.x0, box.y0) as number[];
    const [c = 0, d = 0] = viewport.convertToViewportPoint(box.x1, box.y1) as number[];
    return { left: Math.min(a, c), top: Math.min(b, d), width: Math.abs(c - a), height: Math.abs(d - b) };
  };
  const area = onDevice(all);
  const { createCanvas } = await import('@napi-rs/canvas');
  const canvas = createCanvas(Math.max(1, Math.round(area.width)), Math.max(1, Math.round(area.height)));
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  await page.render({ canvas: canvas as never, canvasContext: context as never, viewport, transform: [1, 0, 0, 1, -area.left, -area.top] }).promise;
  const out: (FigureImage | undefined)[] = [];
  for (const box of clipped) {
    if (box.x1 - box.x0 < 1 || box.y1 - box.y0 < 1) {
      out.push(undefined);
      continue;
    }
    const region = onDevice(box);
    const [left, top] = [Math.round(region.left - area.left), Math.round(region.top - area.top)];
    const piece = createCanvas(
      Math.max(1, Math.min(canvas.width - left, Math.round(region.width))),
      Math.max(1, Math.min(canvas.height - top, Math.round(region.height))),
    );
    piece.getContext('2d').drawImage(canvas, left, top, piece.width, piece.height, 0, 0, piece.width, piece.height);
    out.push(await encodeCanvas(piece, true));
  }
  return out;
}

/** One region of the page rendered to PNG (see renderRegions). */
export async function renderRegion(page: PDFPageProxy, box: Box): Promise<FigureImage | undefined> {
  return (await renderRegions(page, [box]))[0];
}

/** PNG (RGB when opaque), or JPEG when that is much smaller for an opaque picture (a photo). */
async function encodeCanvas(canvas: Canvas, opaque: boolean): Promise<FigureImage> {
  let bytes = opaque
    ? encodeRgbPng(canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data, canvas.width, canvas.height)
    : await canvas.encode('png');
  let mime: FigureImage['mime'] = 'image/png';
  if (opaque && bytes.byteLength > JPEG_TRY_BYTES) {
    const jpeg = await canvas.encode('jpeg', 85);
    if (jpeg.byteLength < bytes.byteLength * 0.7) {
      bytes = jpeg;
      mime = 'image/jpeg';
    }
  }
  return { mime, base64: bytes.toString('base64'), width: canvas.width, height: canvas.height };
}

/** Area of the intersection of two boxes. */
export function overlapArea(a: { x0: number; y0: number; x1: number; y1: number }, b: { x0: number; y0: number; x1: number; y1: number }): number {
  const width = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const height = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  return width > 0 && height > 0 ? width * height : 0;
}

/** Hands out the page's image budget in order; says whether anything was refused. */
export function createImageBudget(): { take(image: FigureImage): boolean; readonly full: boolean; readonly capped: boolean } {
  let count = 0;
  let bytes = 0;
  let capped = false;
  return {
    take(image) {
      if (count >= MAX_IMAGES_PER_PAGE || bytes + image.base64.length > MAX_IMAGE_BASE64_PER_PAGE) {
        capped = true;
        return false;
      }
      count++;
      bytes += image.base64.length;
      return true;
    },
    /** no picture can be taken any more: skip the decoding */
    get full() {
      if (count >= MAX_IMAGES_PER_PAGE) capped = true;
      return count >= MAX_IMAGES_PER_PAGE;
    },
    get capped() {
      return capped;
    },
  };
}
