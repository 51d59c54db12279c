// Formulas of the local engine against the TeX they were set from: each test/fixtures/tex/formulas*.pdf (pdfTeX, with
// the display and inline formulas of the .json beside it). A source formula counts as read when some formula of the
// conversion (a display block's TeX or an inline formula's) draws, in KaTeX, its symbols in its order and in the same
// places (base, script, numerator, root...), anywhere within it. Run with Node 24 from the checkout's root:
// node bench/formula-truth.mjs [--list]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { convertLocally } from '../test/helpers/local-pages.ts';
import { drawnWithin, formulasOf } from '../test/helpers/math-shape.ts';

const dir = path.resolve(import.meta.dirname, '../test/fixtures/tex');
const list = process.argv.includes('--list');
let found = 0;
let total = 0;
for (const name of readdirSync(dir).filter((file) => /^formulas.*\.json$/.test(file))) {
  const expected = JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
  const pdf = path.join(dir, name.replace(/\.json$/, '.pdf'));
  const { pages } = await convertLocally(new Uint8Array(readFileSync(pdf)), { ocr: false });
  const ours = formulasOf(pages);
  for (const [kind, sources] of Object.entries(expected))
    for (const tex of sources) {
      const read = drawnWithin(tex, ours) !== undefined;
      total++;
      if (read) found++;
      if (list) console.log(`${read ? 'read' : 'MISS'} ${name} ${kind}: ${tex}`);
    }
}
console.log(`formulas read as set: ${found} of ${total}`);
