import fs from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { buildWebApp } from '../../scripts/build-web.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumPath, expectNoAxeViolations, launchChromium } from '../helpers/browser.ts';
import { api, gatedEngine, makePaid, THREE_PAGES } from '../service/harness.ts';

const ENV = { CHUNK_PAGES: '1', CHUNK_CONCURRENCY: '2', CHUNK_HEARTBEAT_INTERVAL_MS: '100', CONVERSION_POOL_SIZE: '1', ADMIN_EMAILS: 'admin@example.com' };
const SLOW = 120_000;

let app: TestApp;
let engine: ReturnType<typeof gatedEngine>;
let browser: Browser;

describe.skipIf(!chromiumPath)('web app in Chromium', () => {
  beforeAll(async () => {
    await buildWebApp();
    app = await startTestApp({ env: ENV, workers: true, engine: (core) => (engine = gatedEngine(core.config, core.log)).provider });
    await registerConversionJobs(app.deps, { schedule: false });
    browser = await launchChromium();
  }, SLOW);
  afterAll(async () => {
    await browser?.close();
  });

  async function signedIn(email: string, credits = 100): Promise<Page> {
    const token = await app.token(email);
    await api(app, token, 'GET', '/api/me');
    await makePaid(app, email, credits);
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(app.baseUrl);
    await page.locator('input[name="token"]').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Convert a PDF' }).waitFor();
    return page;
  }

  async function uploadAndStart(page: Page) {
    await page.locator('input[type="file"]').setInputFiles(THREE_PAGES);
    const estimate = page.locator('#estimate');
    await estimate.waitFor({ timeout: 60_000 });
    expect(await estimate.textContent()).toContain('3 pages, costs 3 credits');
    await page.getByRole('button', { name: 'Start conversion' }).click();
  }

  it(
    'signs in with a token, shows a readable error for a bad one, and passes axe on the sign-in page',
    async () => {
      const page = await browser.newPage();
      await page.goto(app.baseUrl);
      await expectNoAxeViolations(page, 'the sign-in page');
      await page.locator('input[name="token"]').fill('not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('Sign in again');
      expect(await alert.textContent()).not.toMatch(/[{}]/);
      await page.close();
    },
    SLOW,
  );

  it(
    'uploads a corpus PDF, shows pages and cost, watches live progress to the end and downloads the zip',
    async () => {
      const page = await signedIn('web-convert@example.com');
      await expectNoAxeViolations(page, 'the convert page');
      engine.holdConvert();
      await uploadAndStart(page);
      // Held in its first chunk: the stream's progress is on screen with the cancel button.
      const status = page.getByRole('status').filter({ hasText: 'of 3 pages' });
      await status.waitFor();
      await page.getByRole('button', { name: 'Cancel conversion' }).waitFor();
      await expectNoAxeViolations(page, 'the convert page while a conversion runs');
      engine.releaseConvert();

      const link = page.getByRole('link', { name: /^Download/ });
      await link.waitFor({ timeout: 90_000 });
      expect(await link.textContent()).toMatch(/^Download multicolumn-latex\.zip/);
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      const zip = await fs.readFile((await download.path())!);
      expect(zip.subarray(0, 2).toString()).toBe('PK');

      // The file list refreshes itself: the file shows as completed with its pages and cost.
      const row = page.getByRole('row', { name: /multicolumn-latex\.pdf/ });
      await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('completed');
      expect(await row.textContent()).toContain('No');
      await expectNoAxeViolations(page, 'the convert page after a conversion');
      await page.context().close();
    },
    SLOW,
  );

  it(
    'cancels a running conversion from the page; nothing is charged',
    async () => {
      const page = await signedIn('web-cancel@example.com', 50);
      engine.holdConvert();
      try {
        await uploadAndStart(page);
        await page.getByRole('button', { name: 'Cancel conversion' }).click();
        await page.getByRole('status').filter({ hasText: 'Cancelled. Nothing was charged' }).waitFor();
      } finally {
        engine.releaseConvert();
      }
      const me = (await (await api(app, await app.token('web-cancel@example.com'), 'GET', '/api/me')).json()) as {
        balance: { creditsRemaining: number; creditsHeld: number };
      };
      expect(me.balance).toMatchObject({ creditsRemaining: 50, creditsHeld: 0 });
      await page.context().close();
    },
    SLOW,
  );

  it(
    'passes axe on every page, and only an admin sees the email admin',
    async () => {
      const user = await signedIn('web-pages@example.com');
      expect(await user.getByRole('link', { name: 'Email admin' }).count()).toBe(0);
      for (const [name, heading] of [
        ['Webhooks', 'Webhooks'],
        ['Account', 'Account'],
      ] as const) {
        await user.getByRole('link', { name }).click();
        await user.getByRole('heading', { level: 1, name: heading }).waitFor();
        await expectNoAxeViolations(user, `the ${name} page`);
      }
      await user.context().close();

      const admin = await signedIn('admin@example.com');
      await admin.getByRole('link', { name: 'Email admin' }).click();
      await admin.getByRole('heading', { level: 1, name: 'Email admin' }).waitFor();
      await admin.getByRole('heading', { name: 'Suppression list' }).waitFor();
      await expectNoAxeViolations(admin, 'the email admin page');
      await admin.context().close();
    },
    SLOW,
  );
});
