import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { recordEmailEvent } from '../../server/delivery-events/delivery-events.queries.ts';
import { recordEmailSend } from '../../server/email/email.queries.ts';
import { buildWebApp } from '../../scripts/build-web.ts';
import { startDnsFake } from '../fakes/dns.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumPath, expectNoAxeViolations, launchChromium } from '../helpers/browser.ts';
import { api, CORPUS, gatedEngine, makePaid, THREE_PAGES } from '../service/harness.ts';

const ENV = { CHUNK_PAGES: '1', CHUNK_CONCURRENCY: '2', CHUNK_HEARTBEAT_INTERVAL_MS: '100', CONVERSION_POOL_SIZE: '1', ADMIN_EMAILS: 'admin@example.com' };
const SLOW = 120_000;
/** One tagged page: the full conversion stays short on a loaded machine. */
const ONE_PAGE = path.join(CORPUS, 'verapdf-ua1-7.4.2-headings.pdf');

let app: TestApp;
let engine: ReturnType<typeof gatedEngine>;
let browser: Browser;
let receiver: WebhookReceiver;

describe.skipIf(!chromiumPath)('web app in Chromium', () => {
  beforeAll(async () => {
    await buildWebApp();
    const dns = await startDnsFake();
    receiver = await startWebhookReceiver();
    afterAll(async () => {
      await receiver.close();
      await dns.close();
    });
    app = await startTestApp({
      env: { ...ENV, WEBHOOK_TEST_ALLOW_LOOPBACK: 'true', WEBHOOK_DNS_SERVERS: dns.server },
      workers: true,
      engine: (core) => (engine = gatedEngine(core.config, core.log)).provider,
    });
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

  async function uploadAndStart(page: Page, file: string, pages: number) {
    await page.locator('input[type="file"]').setInputFiles(file);
    const estimate = page.locator('#estimate');
    await estimate.waitFor({ timeout: 60_000 });
    expect(await estimate.textContent()).toContain(`${pages} ${pages === 1 ? 'page' : 'pages'}, costs ${pages} ${pages === 1 ? 'credit' : 'credits'}`);
    await page.getByRole('button', { name: 'Start conversion' }).click();
  }

  it(
    'the axe check fails on a page with a violation',
    async () => {
      const page = await browser.newPage();
      await page.setContent('<!doctype html><html lang="en"><title>t</title><main><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></main></html>');
      await expect(expectNoAxeViolations(page, 'a page with an image without alt')).rejects.toThrow(/image-alt/);
      await page.close();
    },
    SLOW,
  );

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
      engine.holdConvert();
      await uploadAndStart(page, ONE_PAGE, 1);
      // Held in its first chunk: the stream's progress is on screen with the cancel button.
      const status = page.getByRole('status').filter({ hasText: 'of 1 page' });
      await status.waitFor();
      await page.getByRole('button', { name: 'Cancel conversion' }).waitFor();
      await expectNoAxeViolations(page, 'the convert page while a conversion runs');
      engine.releaseConvert();

      const link = page.getByRole('link', { name: /^Download/ });
      await link.waitFor({ timeout: 90_000 });
      expect(await link.textContent()).toMatch(/^Download verapdf-ua1-7\.4\.2-headings\.zip/);
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      const zip = await fs.readFile((await download.path())!);
      expect(zip.subarray(0, 2).toString()).toBe('PK');

      // The file list refreshes itself: the file shows as completed with its pages and cost.
      const row = page.getByRole('row', { name: /verapdf-ua1-7\.4\.2-headings\.pdf/ });
      await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('completed');
      expect(await row.textContent()).toContain('No');
      await expectNoAxeViolations(page, 'the convert page after a conversion');
      await page.context().close();
    },
    2 * SLOW,
  );

  it(
    'cancels a running conversion from the page; nothing is charged',
    async () => {
      const page = await signedIn('web-cancel@example.com', 50);
      engine.holdConvert();
      try {
        await uploadAndStart(page, THREE_PAGES, 3);
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

  it(
    'creates a webhook, shows its secret once, and the test button reports what the local receiver answered',
    async () => {
      const page = await signedIn('web-hooks@example.com');
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('Endpoint URL (https)').fill(receiver.url('/folio'));
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = page.locator('#webhook-secret');
      await secret.waitFor();
      receiver.setSecrets([(await secret.textContent())!.trim()]);
      expect(await page.getByText('it is shown only once').count()).toBe(1);
      await expectNoAxeViolations(page, 'the webhooks page with a new secret');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect(await secret.count()).toBe(0);

      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByRole('status').filter({ hasText: 'Test delivered: HTTP 200' }).waitFor({ timeout: 30_000 });
      expect(receiver.requests).toHaveLength(1);
      expect(receiver.requests[0]!.verification).toMatchObject({ ok: true });

      await page.getByRole('button', { name: 'Delivery history' }).click();
      const row = page.getByRole('row', { name: /ping/ });
      await row.waitFor();
      expect(await row.textContent()).toContain('200');
      await expectNoAxeViolations(page, 'the webhooks page with its delivery history');
      await page.context().close();
    },
    SLOW,
  );

  it(
    'filters the email log, charts the status summary, and removes a suppression after confirming',
    async () => {
      const send = (fields: Record<string, unknown>) =>
        recordEmailSend(app.deps.db, {
          id: randomUUID(),
          status: 'sent',
          category: 'transactional',
          source: 'test',
          provider: 'provider_a',
          provider_message_id: `m-${randomUUID()}`,
          to: ['reader@example.com'],
          subject: 'Your invoice',
          ...fields,
        } as never);
      await send({});
      await send({ category: 'auth', subject: 'Sign in to Folio', to: ['signer@example.com'] });
      await send({ status: 'failed', error_kind: 'rejected', provider_message_id: undefined, subject: 'Broken', to: ['broken@example.com'] });
      await recordEmailEvent(app.deps.db, {
        provider: 'provider_a',
        providerMessageId: 'bounced-web',
        event: 'bounced',
        to: ['gone@example.com'],
        subject: 'Welcome',
        suppress: { addresses: ['gone@example.com'], reason: 'hard_bounce' },
      });

      const page = await signedIn('admin@example.com');
      await page.getByRole('link', { name: 'Email admin' }).click();
      await page.getByRole('status').filter({ hasText: 'sends match' }).waitFor();
      expect(await page.getByRole('status').filter({ hasText: 'sends match' }).textContent()).toContain('4 sends match');
      expect(await page.getByRole('list', { name: 'Status summary' }).getByRole('listitem').allTextContents()).toEqual(
        expect.arrayContaining(['sent:2', 'failed:1', 'bounced:1']),
      );

      await page.getByLabel('Category').selectOption('auth');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByRole('status').filter({ hasText: '1 send match' }).waitFor();
      expect(await page.getByRole('row', { name: /signer@example\.com/ }).count()).toBe(1);
      expect(await page.getByRole('row', { name: /reader@example\.com/ }).count()).toBe(0);
      await expectNoAxeViolations(page, 'the email admin page, filtered');

      await page.getByRole('button', { name: 'Remove gone@example.com' }).click();
      await page.getByRole('button', { name: 'Yes, remove gone@example.com' }).click();
      await page.getByRole('status').filter({ hasText: 'gone@example.com can be mailed again' }).waitFor();
      const suppressions = page.getByRole('region', { name: 'Suppression list' });
      expect(await suppressions.getByRole('cell', { name: 'gone@example.com', exact: true }).count()).toBe(0);
      expect(await suppressions.textContent()).toContain('No suppressed addresses.');
      await page.context().close();
    },
    SLOW,
  );
});
