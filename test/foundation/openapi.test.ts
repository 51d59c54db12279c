import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { renderOpenApi } from '../../scripts/write-openapi.ts';

describe('openapi.json', () => {
  it('is the document the routers generate (run `npm run openapi` after changing a route)', async () => {
    const committed = await fs.readFile(new URL('../../openapi.json', import.meta.url), 'utf8');
    expect(committed).toBe(renderOpenApi());
  });
});
