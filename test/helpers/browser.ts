import fs from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's chromium (`apt-get install chromium`); .ci/run installs it, and CI fails without it (test/global-setup.ts). */
const CHROMIUM = '/usr/bin/chromium';

export const chromiumPath = fs.existsSync(CHROMIUM) ? CHROMIUM : undefined;
if (!chromiumPath) console.warn(`browser tests skipped: ${CHROMIUM} is missing (apt-get install -y --no-install-recommends chromium)`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core inside the page (WCAG 2.x A and AA plus best practices) and
 * fails with each violation's rule and first target. Evaluated over the
 * DevTools protocol, so the app's content-security policy stays as it is.
 */
export async function expectNoAxeViolations(page: Page, what: string) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: unknown }> }> }> };
      }
    ).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    return result.violations.map((violation) => `${violation.id}: ${violation.help} (${JSON.stringify(violation.nodes[0]?.target)})`);
  });
  expect(violations, `axe on ${what}: ${violations.join('; ')}`).toEqual([]);
}
