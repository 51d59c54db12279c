import fs from 'node:fs/promises';
import { buildOpenApiDocument } from '../server/openapi.ts';

/** `npm run openapi`: regenerates the committed openapi.json from the routers. */
export function renderOpenApi() {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

if (import.meta.main) {
  await fs.writeFile(new URL('../openapi.json', import.meta.url), renderOpenApi());
  console.log('wrote openapi.json');
}
