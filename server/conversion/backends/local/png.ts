import { crc32, deflateSync } from 'node:zlib';

/**
 * An opaque picture as an RGB PNG (colour type 2). Canvas encoders always
 * write RGBA, and a PNG with an alpha channel makes pdfkit inflate it, split
 * the alpha out and deflate both again for every figure of the tagged PDF;
 * without one, pdfkit embeds the compressed data as it is. Each row is
 * filtered with Sub, which turns the flat areas of diagrams into zeros.
 */
export function encodeRgbPng(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): Buffer {
  const stride = width * 3 + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    raw[row] = 1; // Sub: each byte minus the same channel of the pixel to its left
    let source = y * width * 4;
    raw[row + 1] = rgba[source]!;
    raw[row + 2] = rgba[source + 1]!;
    raw[row + 3] = rgba[source + 2]!;
    for (let x = 1; x < width; x++) {
      source += 4;
      const out = row + 1 + x * 3;
      // a Buffer stores the difference modulo 256, as the filter wants
      raw[out] = rgba[source]! - rgba[source - 4]!;
      raw[out + 1] = rgba[source + 1]! - rgba[source - 3]!;
      raw[out + 2] = rgba[source + 2]! - rgba[source - 2]!;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // RGB
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One PNG chunk: length, type, data and the CRC over type and data. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
