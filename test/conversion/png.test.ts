import { createCanvas, loadImage } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { encodeRgbPng } from '../../server/conversion/backends/local/png.ts';
import { renderTaggedPdf } from '../../server/conversion/render/pdf.ts';
import { page } from './render-fixture.ts';

describe('opaque figures as RGB PNG', () => {
  it('encodes every pixel exactly, without an alpha channel', async () => {
    const canvas = createCanvas(37, 23);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, 37, 23);
    // flat areas, a gradient (every Sub difference, wrapping below zero) and single odd pixels
    const gradient = context.createLinearGradient(0, 0, 37, 0);
    gradient.addColorStop(0, '#ff0000');
    gradient.addColorStop(1, '#0000ff');
    context.fillStyle = gradient;
    context.fillRect(0, 8, 37, 7);
    context.fillStyle = '#123456';
    context.fillRect(5, 2, 1, 1);
    context.fillRect(36, 22, 1, 1);
    const pixels = context.getImageData(0, 0, 37, 23).data;

    const png = encodeRgbPng(pixels, 37, 23);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(37);
    expect(png.readUInt32BE(20)).toBe(23);
    expect(png[25]).toBe(2); // colour type RGB

    const decoded = await loadImage(png);
    const back = createCanvas(37, 23);
    back.getContext('2d').drawImage(decoded, 0, 0);
    expect(Buffer.from(back.getContext('2d').getImageData(0, 0, 37, 23).data)).toEqual(Buffer.from(pixels));
  });

  it('is embedded in the tagged PDF as it is: no soft mask split off', async () => {
    const canvas = createCanvas(40, 30);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, 40, 30);
    context.fillStyle = '#336699';
    context.fillRect(10, 10, 20, 10);
    const rgb = encodeRgbPng(context.getImageData(0, 0, 40, 30).data, 40, 30);
    const rgba = await canvas.encode('png');
    const pdfWith = async (bytes: Buffer) =>
      (
        await renderTaggedPdf({
          meta: { title: 'Figure', lang: 'en', pageCount: 1, tagged: false, sourceName: 'f.pdf' },
          pages: [
            page(1, [
              {
                kind: 'figure',
                page: 1,
                image: { mime: 'image/png', base64: bytes.toString('base64'), width: 40, height: 30 },
                alt: 'A blue bar',
                decorative: false,
                needsAlt: false,
              },
            ]),
          ],
        })
      ).toString('latin1');
    expect(await pdfWith(rgb)).not.toMatch(/\/SMask/);
    // the canvas's own RGBA encoding is what made pdfkit split the alpha channel out
    expect(await pdfWith(rgba)).toMatch(/\/SMask/);
  });
});
