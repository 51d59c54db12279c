import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBenchmarkJobs } from '../../jobs/benchmark/benchmark.worker.ts';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { recordEmailEvent } from '../../server/delivery-events/delivery-events.queries.ts';
import { recordEmailSend } from '../../server/email/email.queries.ts';
import { buildWebApp } from '../../scripts/build-web.ts';
import { startDnsFake } from '../fakes/dns.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumPath, expectNoAxeViolations, launchChromium } from '../helpers/browser.ts';
import { drawPicturesPdf } from '../helpers/local-pages.ts';
import { until } from '../helpers/wait.ts';
import { api, CORPUS, gatedEngine, jobState, makePaid, THREE_PAGES, uploadPdf } from '../service/harness.ts';

const ENV = {
  CHUNK_PAGES: '1',
  CHUNK_CONCURRENCY: '2',
  CHUNK_HEARTBEAT_INTERVAL_MS: '100',
  CONVERSION_POOL_SIZE: '1',
  ADMIN_EMAILS: 'admin@example.com',
  // the lane is on (nothing drives it here): a one-page high-fidelity job opts in and waits for it
  BATCH_CONVERSION_ENABLED: 'true',
  BATCH_CONVERSION_S3_BUCKET: 'web-batch',
  BATCH_CONVERSION_ROLE_ARN: 'arn:aws:iam::123456789012:role/web-batch',
};
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
    await registerBenchmarkJobs(app.deps);
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

      // The accessible HTML opens in a new tab that cannot reach back into the app.
      const html = page.getByRole('link', { name: /open the accessible HTML/ });
      expect(await html.getAttribute('target')).toBe('_blank');
      expect((await html.getAttribute('rel'))?.split(' ')).toContain('noopener');
      const [tab] = await Promise.all([page.context().waitForEvent('page'), html.click()]);
      await tab.waitForLoadState();
      expect(tab.url()).toContain('/html?token=');
      expect(await tab.getByRole('heading').count()).toBeGreaterThan(0);
      await tab.close();

      // The file list refreshes itself: the file shows as completed with its pages and cost.
      const row = page.getByRole('row', { name: /verapdf-ua1-7\.4\.2-headings\.pdf/ });
      await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('completed');
      expect(await row.textContent()).toContain('No');
      await row.getByRole('link', { name: /Open the HTML/ }).waitFor();
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
      expect(await user.getByRole('link', { name: 'Alerts' }).count()).toBe(0);
      for (const [name, heading] of [
        ['Figures', 'Describe figures'],
        ['Benchmark', 'Benchmark'],
        ['Webhooks', 'Webhooks'],
        ['Account', 'Account'],
      ] as const) {
        await user.getByRole('link', { name }).click();
        await user.getByRole('heading', { level: 1, name: heading }).waitFor();
        await expectNoAxeViolations(user, `the ${name} page`);
      }
      await user.getByRole('heading', { name: 'Conversion history' }).waitFor();
      expect(await user.getByRole('heading', { name: 'Grant credits' }).count()).toBe(0);
      // an admin page by its address alone is not shown: the convert page is
      await user.goto(`${app.baseUrl}/#/alerts`);
      await user.getByRole('heading', { level: 1, name: 'Convert a PDF' }).waitFor();
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

  it(
    'opts a high-fidelity conversion into the batch lane, shows it waiting in the file list, and process now runs it at once',
    async () => {
      const page = await signedIn('web-batch@example.com');
      engine.holdConvert();
      try {
        await page.locator('input[type="file"]').setInputFiles(ONE_PAGE);
        await page.locator('#estimate').waitFor();
        expect(await page.getByLabel(/Use the batch lane/).count()).toBe(0);
        await page.getByLabel('High fidelity').check();
        await page.getByLabel(/Use the batch lane/).check();
        await expectNoAxeViolations(page, 'the convert page offering the batch lane');
        await page.getByRole('button', { name: 'Start conversion' }).click();

        const run = page.getByRole('region', { name: /^Converting/ });
        await run.getByRole('status').filter({ hasText: 'Waiting for the batch lane' }).waitFor();
        const row = page.getByRole('row', { name: /verapdf-ua1-7\.4\.2-headings\.pdf/ });
        await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/Waiting for the batch lane.*Yes/);
        await row.getByRole('button', { name: 'Process now' }).waitFor();

        await run.getByRole('button', { name: 'Process now' }).click();
        await expect.poll(() => run.getByRole('status').textContent(), { timeout: 15_000 }).not.toContain('Waiting for the batch lane');
        await expect.poll(() => row.textContent(), { timeout: 15_000 }).not.toContain('Yes');
        expect(await page.getByRole('alert').count()).toBe(0);
        await run.getByRole('button', { name: 'Cancel conversion' }).click();
        await run.getByRole('status').filter({ hasText: 'Cancelled' }).waitFor();
      } finally {
        engine.releaseConvert();
      }
      await page.context().close();
    },
    SLOW,
  );

  it(
    'describes the pictures a conversion left without alt text, marks one decorative, and the outputs are rendered again',
    async () => {
      const email = 'web-figures@example.com';
      const page = await signedIn(email);
      const token = await app.token(email);
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-web-figures-'));
      const pdf = path.join(dir, 'stations.pdf');
      await fs.writeFile(pdf, await drawPicturesPdf());
      const fileId = await uploadPdf(app, token, pdf);
      const unconverted = await uploadPdf(app, token, ONE_PAGE);
      await fs.rm(dir, { recursive: true, force: true });
      expect((await api(app, token, 'POST', `/api/convert/${fileId}`, {})).status).toBe(200);

      // While it converts: a file without a finished conversion gets the API's refusal as a sentence.
      await page.goto(`${app.baseUrl}/#/figures/${unconverted}`);
      const refusal = page.getByRole('alert');
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain('no finished conversion');
      expect(await refusal.textContent()).not.toMatch(/[{}]/);
      await until(
        () => jobState(app, fileId),
        (state) => state?.status === 'completed',
        60_000,
        'the pictures converted',
      );

      await page.getByRole('link', { name: 'All converted files' }).click();
      await page.getByRole('link', { name: 'stations.pdf' }).click();
      const second = page.getByRole('region', { name: 'Picture 2, page 2: Needs a description' });
      await second.waitFor();
      const first = page.getByRole('region', { name: /^Picture 1, page 1/ });
      expect(await first.textContent()).toContain('Figure 1: Rain gauges on the station roof.');
      expect(await second.textContent()).toContain('Readings are sent to the central office');
      const picture = second.getByRole('img');
      await expect.poll(() => picture.evaluate((image) => (image as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      await expectNoAxeViolations(page, 'the figures page');

      await second.getByLabel('Alt text for picture 2').fill('A rain gauge on a flat roof');
      await second.getByRole('button', { name: 'Save picture 2' }).click();
      const saved = page.getByRole('status').filter({ hasText: 'rendered again' });
      await saved.waitFor({ timeout: 30_000 });
      expect(await saved.textContent()).toContain('the accessibility check passed');
      await page.getByRole('region', { name: 'Picture 2, page 2: Described by a person' }).waitFor();

      await first.getByRole('radio', { name: /Decorative/ }).check();
      await first.getByRole('button', { name: 'Save picture 1' }).click();
      await page.getByRole('region', { name: 'Picture 1, page 1: Marked decorative' }).waitFor({ timeout: 30_000 });

      const rendered = page.getByRole('link', { name: /Open the re-rendered HTML/ });
      expect(await rendered.getAttribute('target')).toBe('_blank');
      const html = await (await fetch(new URL((await rendered.getAttribute('href'))!, app.baseUrl))).text();
      expect(html).toContain('alt="A rain gauge on a flat roof"');
      const listed = (await (await api(app, token, 'GET', `/api/files/${fileId}/figures`)).json()) as {
        figures: Array<{ id: string; alt: string | null; decorative: boolean }>;
      };
      expect(listed.figures.map(({ id, alt, decorative }) => ({ id, alt, decorative }))).toEqual([
        { id: 'p1-1', alt: null, decorative: true },
        { id: 'p2-1', alt: 'A rain gauge on a flat roof', decorative: false },
      ]);
      await page.context().close();
    },
    SLOW,
  );

  it(
    'lets an admin mute and reroute alerts and grant credits, with the API refusals as sentences',
    async () => {
      const page = await signedIn('admin@example.com');
      await page.getByRole('link', { name: 'Alerts' }).click();
      await page.getByRole('heading', { level: 1, name: 'Alert settings' }).waitFor();
      await expectNoAxeViolations(page, 'the alert settings page');

      const alarms = page.getByRole('region', { name: 'Monitoring alarms' });
      await alarms.getByLabel('Mute monitoring alarms').check();
      await alarms.getByRole('button', { name: 'Save monitoring alarms' }).click();
      await alarms.getByRole('status').filter({ hasText: 'Monitoring alarms are muted.' }).waitFor();

      const failures = page.getByRole('region', { name: 'Email delivery failures' });
      const to = failures.getByLabel(/^Send the email of email delivery failures to/);
      await to.fill('not-an-address');
      await failures.getByRole('button', { name: 'Save email delivery failures' }).click();
      const refusal = failures.getByRole('alert');
      await refusal.waitFor();
      expect(await refusal.textContent()).toMatch(/^Input validation failed: emailTo: /);
      expect(await refusal.textContent()).not.toMatch(/[{}[\]]/);
      await to.fill('ops@example.com');
      await failures.getByRole('button', { name: 'Save email delivery failures' }).click();
      await failures.getByRole('status').filter({ hasText: 'go by email and messenger to ops@example.com' }).waitFor();
      const stored = (await (await api(app, await app.token('admin@example.com'), 'GET', '/api/admin/alert-settings')).json()) as {
        settings: Array<{ alertType: string; enabled: boolean; emailTo: string | null }>;
      };
      expect(stored.settings).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ alertType: 'monitoring_alarm', enabled: false }),
          expect.objectContaining({ alertType: 'email_delivery_failure', enabled: true, emailTo: 'ops@example.com' }),
        ]),
      );

      await page.getByRole('link', { name: 'Account' }).click();
      const grant = page.getByRole('region', { name: 'Grant credits' });
      await grant.waitFor();
      await expectNoAxeViolations(page, 'the account page of an admin');
      await grant.getByLabel('Customer email').fill('web-grantee@example.com');
      await grant.getByRole('button', { name: 'Grant credits' }).click();
      const missing = grant.getByRole('alert');
      await missing.waitFor();
      expect(await missing.textContent()).toContain('credits');
      await grant.getByLabel('Credits').fill('25');
      await grant.getByLabel(/^Reason/).fill('Pilot customer');
      await grant.getByRole('button', { name: 'Grant credits' }).click();
      await grant.getByRole('status').filter({ hasText: 'Granted 25 credits to web-grantee@example.com; their balance is 25.' }).waitFor();
      expect(await grant.getByRole('alert').count()).toBe(0);
      await page.context().close();
    },
    SLOW,
  );

  it(
    'starts a pipeline comparison and watches the session every 3 seconds until the results stand side by side',
    async () => {
      const email = 'web-bench@example.com';
      const page = await signedIn(email);
      await uploadPdf(app, await app.token(email), ONE_PAGE);
      const polls: number[] = [];
      page.on('request', (request) => void (request.url().includes('benchmark.get') && polls.push(Date.now())));

      await page.getByRole('link', { name: 'Benchmark' }).click();
      await page.getByRole('heading', { level: 1, name: 'Benchmark' }).waitFor();
      await page.getByLabel('local + UX optimizer', { exact: true }).check();
      expect(await page.locator('#benchmark-cost').textContent()).toContain('Costs 2 credits (1 page × 2 pipelines)');
      await page.getByRole('button', { name: 'Start the comparison' }).click();
      const done = page.getByRole('status').filter({ hasText: 'Complete: 2 pipelines compared.' });
      await done.waitFor({ timeout: 60_000 });

      expect(polls.length).toBeGreaterThanOrEqual(2);
      expect(polls[1]! - polls[0]!).toBeGreaterThanOrEqual(2_900);
      const table = page.getByRole('table', { name: 'Pipelines side by side' });
      expect(await table.getByRole('columnheader').allTextContents()).toEqual(['Measure', '1. local', '2. local + UX optimizer']);
      const wcag = await table
        .getByRole('row', { name: /^Accessibility check/ })
        .getByRole('cell')
        .allTextContents();
      expect(wcag).toHaveLength(2);
      for (const cell of wcag) expect(cell).toMatch(/^(passed|failed)$/);
      expect(await table.getByRole('link', { name: 'HTML of pipeline 2' }).count()).toBe(1);
      await expectNoAxeViolations(page, 'the benchmark page with results');
      await page.context().close();
    },
    SLOW,
  );

  it(
    'converts by keyboard alone, with visible focus at every stop: sign in, pick the file, start, download',
    async () => {
      const email = 'web-keyboard@example.com';
      const token = await app.token(email);
      await api(app, token, 'GET', '/api/me');
      await makePaid(app, email, 20);
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      await page.goto(app.baseUrl);
      await page.locator('input[name="token"]').waitFor();

      await tabTo(page, (focused) => focused.name === 'token', 'the token field');
      await page.keyboard.type(token);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Convert a PDF' }).waitFor();

      await tabTo(page, (focused) => focused.type === 'file', 'the file input');
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Space')]);
      await chooser.setFiles(ONE_PAGE);
      await page.locator('#estimate').waitFor({ timeout: 60_000 });
      await tabTo(page, (focused) => focused.text === 'Start conversion', 'the start button');
      await page.keyboard.press('Enter');

      await page.getByRole('link', { name: /^Download/ }).waitFor({ timeout: 90_000 });
      await tabTo(page, (focused) => focused.tag === 'A' && focused.text.startsWith('Download'), 'the Download link');
      const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
      expect(download.suggestedFilename()).toBe('verapdf-ua1-7.4.2-headings.zip');
      await context.close();
    },
    SLOW,
  );
});

type Focused = { tag: string; name: string; type: string; text: string; visible: boolean };

/** Presses Tab until `want` holds for the focused element (at most 40 stops), and checks that its focus can be seen. */
async function tabTo(page: Page, want: (focused: Focused) => boolean, what: string) {
  for (let stop = 0; stop < 40; stop++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate((): Focused => {
      const element = document.activeElement ?? document.body;
      const style = getComputedStyle(element);
      return {
        tag: element.tagName,
        name: element.getAttribute('name') ?? '',
        type: element.getAttribute('type') ?? '',
        text: (element.textContent ?? '').trim(),
        visible: element.matches(':focus-visible') && style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2,
      };
    });
    if (want(focused)) {
      expect(focused.visible, `${what} shows where the focus is`).toBe(true);
      return;
    }
  }
  throw new Error(`Tab never reached ${what}`);
}
