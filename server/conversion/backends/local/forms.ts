import type { Block, FormField } from '../../model.ts';
import type { Segment } from './segments.ts';

/**
 * AcroForm fields of a page (pdf.js widget annotations) as a form block:
 * text, check box, radio group and choice fields with their values, each
 * named by its /TU, else by the words printed beside it, else by its field
 * name. Push buttons do nothing in a document that cannot submit, and
 * signature fields hold no text: both are left out.
 */

/** What pdf.js's getAnnotations() gives for a widget; only the fields read here. */
export type WidgetAnnotation = {
  subtype?: string;
  fieldType?: string;
  fieldName?: string;
  fieldValue?: unknown;
  alternativeText?: string;
  rect?: number[];
  hidden?: boolean;
  checkBox?: boolean;
  radioButton?: boolean;
  pushButton?: boolean;
  exportValue?: string;
  buttonValue?: string;
  multiLine?: boolean;
  combo?: boolean;
  options?: { exportValue?: unknown; displayValue?: unknown }[];
};

type Box = { x0: number; y0: number; x1: number; y1: number };

/** How far (points) a label may sit from its field, to the side. */
const LABEL_REACH = 220;
/** A printed label is short: more words than this is a sentence, not a field's name. */
const MAX_LABEL_WORDS = 10;

export type PageForm = {
  block: Extract<Block, { kind: 'form' }>;
  /** the text segments used as labels: they leave the flow, the form says them */
  labels: Set<Segment>;
  /** the box of the fields, page space, to place the form among the blocks */
  box: Box;
};

/**
 * The page's form, or undefined when it has no field worth showing.
 * `segments` are the page's text segments in page space (origin bottom
 * left), offset like the widgets' rectangles.
 */
export function readPageForm(annotations: WidgetAnnotation[], segments: Segment[], page: number): PageForm | undefined {
  const widgets = annotations.filter(
    (annotation) =>
      annotation.subtype === 'Widget' &&
      !annotation.hidden &&
      !annotation.pushButton &&
      (annotation.fieldType === 'Tx' || annotation.fieldType === 'Btn' || annotation.fieldType === 'Ch') &&
      annotation.rect?.length === 4,
  );
  if (widgets.length === 0) return undefined;
  const labels = new Set<Segment>();
  const fields: FormField[] = [];
  const boxes: Box[] = [];
  const radios = new Map<string, { field: FormField & { kind: 'radio' }; box: Box }>();
  // top to bottom, left to right: the order a reader meets them
  const ordered = widgets.map((widget) => ({ widget, box: boxOf(widget.rect!) })).sort((a, b) => b.box.y1 - a.box.y1 || a.box.x0 - b.box.x0);
  for (const { widget, box } of ordered) {
    boxes.push(box);
    const name = widget.fieldName ?? '';
    const tooltip = clean(widget.alternativeText);
    if (widget.fieldType === 'Btn' && widget.radioButton) {
      const option = clean(widget.buttonValue) || clean(widget.exportValue);
      const beside = labelBeside(segments, box, 'right', labels);
      const optionLabel = beside ? beside.text : option;
      if (beside) labels.add(beside);
      let group = radios.get(name);
      if (!group) {
        const label = tooltip || takeLabel(segments, box, labels, 'above') || name;
        group = { field: { kind: 'radio', name, label, value: '', options: [] }, box };
        radios.set(name, group);
        fields.push(group.field);
      }
      group.field.options.push(optionLabel);
      const selected = clean(String(widget.fieldValue ?? ''));
      if (selected !== '' && selected !== 'Off' && option === selected) group.field.value = optionLabel;
      continue;
    }
    if (widget.fieldType === 'Btn') {
      if (!widget.checkBox) continue;
      const value = clean(String(widget.fieldValue ?? ''));
      const checked = value !== '' && value !== 'Off';
      const label = tooltip || takeLabel(segments, box, labels, 'right') || name;
      fields.push({ kind: 'checkbox', name, label, value: checked ? value : '', checked });
      continue;
    }
    const label = tooltip || takeLabel(segments, box, labels, 'left') || name;
    if (widget.fieldType === 'Ch') {
      const options = (widget.options ?? []).map((option) => clean(String(option.displayValue ?? option.exportValue ?? ''))).filter(Boolean);
      const raw = widget.fieldValue;
      const values = (Array.isArray(raw) ? raw : [raw]).map((value) => clean(String(value ?? ''))).filter(Boolean);
      // the value is an export value; a reader wants what the list displayed for it
      const shown = values.map((value) => {
        const match = (widget.options ?? []).find((option) => clean(String(option.exportValue ?? '')) === value);
        return match ? clean(String(match.displayValue ?? value)) : value;
      });
      fields.push({ kind: 'choice', name, label, value: shown.join(', '), options });
      continue;
    }
    const value = typeof widget.fieldValue === 'string' ? widget.fieldValue.replace(/\r\n?/g, '\n').trim() : '';
    fields.push({ kind: 'text', name, label, value, ...(widget.multiLine ? { multiline: true } : {}) });
  }
  if (fields.length === 0) return undefined;
  const box = {
    x0: Math.min(...boxes.map((entry) => entry.x0)),
    y0: Math.min(...boxes.map((entry) => entry.y0)),
    x1: Math.max(...boxes.map((entry) => entry.x1)),
    y1: Math.max(...boxes.map((entry) => entry.y1)),
  };
  return { block: { kind: 'form', page, fields }, labels, box };
}

function boxOf(rect: number[]): Box {
  const [a = 0, b = 0, c = 0, d = 0] = rect;
  return { x0: Math.min(a, c), y0: Math.min(b, d), x1: Math.max(a, c), y1: Math.max(b, d) };
}

function clean(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

function takeLabel(segments: Segment[], box: Box, taken: Set<Segment>, side: 'left' | 'right' | 'above'): string {
  const found = labelBeside(segments, box, side, taken) ?? (side === 'above' ? undefined : labelBeside(segments, box, 'above', taken));
  if (!found) return '';
  taken.add(found);
  return found.text.replace(/[:：]\s*$/, '').trim();
}

/**
 * The short text nearest the field on one side: on its row (the text's
 * baseline within the field's height), ending left of it or starting right
 * of it; or just above it, overlapping it across.
 */
function labelBeside(segments: Segment[], box: Box, side: 'left' | 'right' | 'above', taken: Set<Segment>): Segment | undefined {
  let best: { segment: Segment; distance: number } | undefined;
  for (const segment of segments) {
    if (taken.has(segment) || segment.text.split(/\s+/).length > MAX_LABEL_WORDS) continue;
    const onRow = segment.y + segment.size * 0.3 >= box.y0 - 2 && segment.y <= box.y1 + 2;
    let distance: number | undefined;
    if (side === 'left' && onRow && segment.right <= box.x0 + 2) distance = box.x0 - segment.right;
    if (side === 'right' && onRow && segment.x >= box.x1 - 2) distance = segment.x - box.x1;
    if (
      side === 'above' &&
      segment.y >= box.y1 - 2 &&
      segment.y - box.y1 <= segment.size * 2.5 &&
      segment.x < box.x1 &&
      segment.right > box.x0 - LABEL_REACH / 4
    ) {
      distance = segment.y - box.y1;
    }
    if (distance === undefined || distance > LABEL_REACH) continue;
    if (!best || distance < best.distance) best = { segment, distance };
  }
  return best?.segment;
}
