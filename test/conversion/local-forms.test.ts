import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { describe, expect, it } from 'vitest';
import type { Block, FormField } from '../../server/conversion/model.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { renderTaggedPdf } from '../../server/conversion/render/pdf.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { convertLocally } from '../helpers/local-pages.ts';

const convert = async (bytes: Uint8Array) => (await convertLocally(bytes, { name: 'form.pdf', ocr: false })).pages[0]!;

/** AcroForm fields: read with their labels and values, shown as a definition list, and as Form structure in the tagged PDF. */

async function filledForm(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([612, 792]);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const text = (value: string, x: number, y: number, size = 11) => page.drawText(value, { x, y, size, font });
  text('Membership application', 72, 730, 18);
  text('Please fill in every field and sign the form before you send it back to us.', 72, 700);
  const form = pdf.getForm();
  text('First Name:', 72, 660);
  const first = form.createTextField('applicant.first');
  first.setText('Alice');
  first.addToPage(page, { x: 160, y: 654, width: 180, height: 20, font });
  const news = form.createCheckBox('news');
  news.addToPage(page, { x: 72, y: 620, width: 14, height: 14 });
  news.check();
  text('Send me the newsletter', 94, 622);
  const pets = form.createCheckBox('pets');
  pets.addToPage(page, { x: 72, y: 596, width: 14, height: 14 });
  text('I keep pets', 94, 598);
  text('Preferred contact', 72, 570);
  const contact = form.createRadioGroup('contact');
  for (const [index, option] of ['Email', 'Phone', 'Post'].entries()) {
    contact.addOptionToPage(option, page, { x: 72 + index * 90, y: 545, width: 14, height: 14 });
    text(option, 92 + index * 90, 547);
  }
  contact.select('Phone');
  text('Country:', 72, 510);
  const country = form.createDropdown('country');
  country.addOptions(['Belgium', 'France', 'Spain']);
  country.select('France');
  country.addToPage(page, { x: 160, y: 504, width: 120, height: 20, font });
  const tip = form.createTextField('ref');
  tip.setText('A-1234');
  tip.addToPage(page, { x: 400, y: 460, width: 120, height: 20, font });
  // a field named only by its tooltip (/TU), as accessible forms do (on the widget, where pdf.js reads it)
  tip.acroField.getWidgets()[0]!.dict.set(PDFName.of('TU'), PDFString.of('Reference number'));
  return pdf.save();
}

const formOf = (blocks: Block[]) => blocks.find((block): block is Extract<Block, { kind: 'form' }> => block.kind === 'form');
const meta = { title: 'Form', lang: 'en', pageCount: 1, tagged: false, sourceName: 'form.pdf' };

describe('AcroForm fields', () => {
  it('reads text, check box, radio and choice fields with their printed labels and filled-in values', async () => {
    const result = await convert(await filledForm());
    const form = formOf(result.blocks);
    expect(form?.fields.map((field: FormField) => [field.kind, field.label, field.value])).toEqual([
      ['text', 'First Name', 'Alice'],
      ['checkbox', 'Send me the newsletter', expect.any(String)],
      ['checkbox', 'I keep pets', ''],
      ['radio', 'Preferred contact', 'Phone'],
      ['choice', 'Country', 'France'],
      ['text', 'Reference number', 'A-1234'],
    ]);
    expect(form!.fields.filter((field) => field.kind === 'checkbox').map((field) => field.kind === 'checkbox' && field.checked)).toEqual([true, false]);
    expect(form!.fields.find((field) => field.kind === 'radio')).toMatchObject({ options: ['Email', 'Phone', 'Post'] });
    // the labels are said by the form, not a second time as loose paragraphs
    const paragraphs = result.blocks.filter((block) => block.kind === 'paragraph').map((block) => JSON.stringify(block));
    expect(paragraphs.some((text) => text.includes('First Name') || text.includes('I keep pets'))).toBe(false);
    // the form comes after the text above its first field
    const kinds = result.blocks.map((block) => block.kind);
    expect(kinds.indexOf('form')).toBeGreaterThan(kinds.indexOf('paragraph'));
  });

  it('keeps the fields of the corpus form, named by the words beside them', async () => {
    const bytes = new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'acroform-latex.pdf')));
    const form = formOf((await convert(bytes)).blocks);
    expect(form?.fields.map((field) => [field.kind, field.label])).toEqual([
      ['text', 'Name'],
      ['checkbox', 'Check'],
    ]);
  });

  it('renders the fields as a definition list of labels and values', async () => {
    const result = await convert(await filledForm());
    const { html } = renderHtml({ meta, pages: [result] });
    expect(html).toContain('<dt>First Name</dt><dd>Alice</dd>');
    expect(html).toMatch(/<dt>Send me the newsletter<\/dt><dd><span aria-hidden="true">☑ <\/span>Checked<\/dd>/);
    expect(html).toMatch(/<dt>I keep pets<\/dt><dd>.*Not checked<\/dd>/);
    expect(html).toContain('<dt>Preferred contact</dt><dd>Phone <span class="form-options">(options: Email, Phone, Post)</span></dd>');
    expect(html).toContain('<dt>Country</dt><dd>France');
  });

  it('writes each field as a Form element with a read-only widget named by /TU in the tagged PDF', async () => {
    const result = await convert(await filledForm());
    const pdf = await renderTaggedPdf({ meta, pages: [result] });
    const doc = await getDocument({ data: new Uint8Array(pdf), verbosity: 0 }).promise;
    try {
      const page = await doc.getPage(1);
      const widgets = ((await page.getAnnotations()) as { subtype: string; alternativeText: string; readOnly: boolean; fieldValue: unknown }[]).filter(
        (annotation) => annotation.subtype === 'Widget',
      );
      expect(widgets.map((widget) => widget.alternativeText)).toEqual([
        'First Name',
        'Send me the newsletter',
        'I keep pets',
        'Preferred contact',
        'Country',
        'Reference number',
      ]);
      expect(widgets.every((widget) => widget.readOnly)).toBe(true);
      expect(widgets[0]!.fieldValue).toBe('Alice');
      const roles: string[] = [];
      const walk = (node: { role?: string; children?: unknown[] }) => {
        if (node.role) roles.push(node.role);
        for (const child of node.children ?? []) walk(child as never);
      };
      walk((await page.getStructTree()) as never);
      expect(roles.filter((role) => role === 'Form')).toHaveLength(6);
      const text = (await page.getTextContent()).items.map((item) => ('str' in item ? item.str : '')).join(' ');
      expect(text).toContain('Alice');
    } finally {
      await doc.loadingTask.destroy();
    }
  });
});
