import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startProductHarness } from './harness.ts';

const { app, resend, call, signIn } = await startProductHarness();
const db = app.database.db;

type Mail = { to: string[]; subject: string; text: string; html: string };
const mails = () => resend.delivered.map((message) => message.body as Mail);
const balanceOf = (email: string) =>
  db.oneFirst(sql.type(z.object({ credits: z.number() }))`select credits_remaining as credits from customers where email = ${email}`);

describe('POST /api/admin/credits', () => {
  it('grants credits by address, writes the audit entry and mails a receipt with credits and balance', async () => {
    const admin = await signIn('admin@folio.example');
    const user = await signIn('reader@example.com');
    const answer = await call('POST', '/api/admin/credits', {
      token: admin.token,
      body: { email: 'Reader@Example.com', credits: 25, reason: 'Pilot customer' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      kind: 'grant',
      customerId: user.customerId,
      credits: 25,
      balance: 25,
      receiptStatus: 'sent',
      receiptSent: true,
      duplicate: false,
    });

    const me = await call('GET', '/api/me', { token: user.token });
    expect(me.body.balance).toMatchObject({ planType: 'paid', creditsRemaining: 25 });

    expect(mails()).toHaveLength(1);
    expect(mails()[0]).toMatchObject({ to: ['reader@example.com'], subject: '25 credits added to your Folio account' });
    expect(mails()[0]!.text).toContain('Credits added: 25');
    expect(mails()[0]!.text).toContain('Your balance: 25 credits');
    expect(mails()[0]!.text).toContain('Reason: Pilot customer');
    expect(mails()[0]!.text).toContain('https://folio.example/buy');

    const audit = await db.one(sql.type(z.object({ action: z.string(), subject: z.string(), details: z.record(z.string(), z.unknown()) }))`
      select action, subject, details from admin_audit_log where actor_id = ${admin.id}`);
    expect(audit).toMatchObject({ action: 'credit_grant', subject: 'reader@example.com', details: { credits: 25, reason: 'Pilot customer', balance: 25 } });
    const log = await db.one(
      sql.type(
        z.object({ category: z.string(), source: z.string() }),
      )`select category, source from email_log where to_addresses @> array['reader@example.com']`,
    );
    expect(log).toEqual({ category: 'transactional', source: 'api:receipt:grant' });

    // A second grant adds to the balance and says so.
    const again = await call('POST', '/api/admin/credits', { token: admin.token, body: { customerId: user.customerId, credits: 1, reason: 'Goodwill' } });
    expect(again.body).toMatchObject({ balance: 26, credits: 1 });
    expect(mails()[1]!.subject).toBe('1 credit added to your Folio account');
  });

  it('gives an address with no account yet a customer whose credits wait for the first sign-in', async () => {
    const admin = await signIn('admin@folio.example');
    const answer = await call('POST', '/api/admin/credits', { token: admin.token, body: { email: 'later@example.com', credits: 40, reason: 'Trial' } });
    expect(answer.body).toMatchObject({ balance: 40, receiptSent: true });
    const user = await signIn('later@example.com');
    expect(user.customerId).toBe(answer.body.customerId);
    expect((await call('GET', '/api/me', { token: user.token })).body.balance.creditsRemaining).toBe(40);
  });

  it('is for admins only and refuses a bad body before touching anything', async () => {
    const admin = await signIn('admin@folio.example');
    const plain = await signIn('plain@example.com');
    expect((await call('POST', '/api/admin/credits', { token: plain.token, body: { email: 'plain@example.com', credits: 5, reason: 'me' } })).status).toBe(403);
    const bad = [
      { credits: 5, reason: 'x' },
      { email: 'a@example.com', customerId: plain.customerId, credits: 5, reason: 'x' },
      { email: 'a@example.com', credits: 0, reason: 'x' },
      { email: 'a@example.com', credits: 1.5, reason: 'x' },
      { email: 'a@example.com', credits: 2_000_000, reason: 'x' },
      { email: 'a@example.com', credits: 5 },
    ];
    for (const body of bad) expect((await call('POST', '/api/admin/credits', { token: admin.token, body })).status).toBe(400);
    const unknown = await call('POST', '/api/admin/credits', { token: admin.token, body: { customerId: crypto.randomUUID(), credits: 5, reason: 'x' } });
    expect(unknown).toMatchObject({ status: 404, body: { code: 'CUSTOMER_NOT_FOUND' } });
    expect(await balanceOf('plain@example.com')).toBe(0);
    expect(resend.requests).toHaveLength(0);
  });

  it('grants even when the receipt cannot go out, and says the receipt was not sent', async () => {
    const admin = await signIn('admin@folio.example');
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('bounced@example.com', 'hard_bounce')`);
    const answer = await call('POST', '/api/admin/credits', { token: admin.token, body: { email: 'bounced@example.com', credits: 3, reason: 'x' } });
    expect(answer.body).toMatchObject({ balance: 3, receiptStatus: 'suppressed', receiptSent: false });
    const row = await db.one(sql.type(z.object({ receipt_status: z.string() }))`
      select receipt_status from credit_transactions t join customers c on c.id = t.customer_id where c.email = 'bounced@example.com'`);
    expect(row.receipt_status).toBe('suppressed');
  });
});

describe('POST /internal/credits/purchase', () => {
  const purchase = { email: 'buyer@example.com', credits: 100, paymentReference: 'pi_3Nabc', amountCents: 1200, currency: 'usd' };

  it('credits a purchase once and mails one receipt, however often the payment webhook calls', async () => {
    const first = await call('POST', '/internal/credits/purchase', { proxy: true, body: purchase });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ kind: 'purchase', credits: 100, balance: 100, receiptSent: true, duplicate: false });
    const again = await call('POST', '/internal/credits/purchase', { proxy: true, body: purchase });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ transactionId: first.body.transactionId, balance: 100, receiptStatus: 'sent', duplicate: true });
    // Two deliveries at the same moment: one of them credits.
    const racing = { ...purchase, paymentReference: 'pi_race' };
    const both = await Promise.all([
      call('POST', '/internal/credits/purchase', { proxy: true, body: racing }),
      call('POST', '/internal/credits/purchase', { proxy: true, body: racing }),
    ]);
    expect(both.map((answer) => answer.status)).toEqual([200, 200]);
    expect(both.map((answer) => answer.body.duplicate).sort()).toEqual([false, true]);
    expect(await balanceOf('buyer@example.com')).toBe(200);
    expect(mails()).toHaveLength(2);
    expect(mails()[0]).toMatchObject({ to: ['buyer@example.com'], subject: 'Your Folio receipt: 100 credits' });
    expect(mails()[0]!.text).toContain('Amount paid: $12.00');
    expect(mails()[0]!.text).toContain('Credits added: 100');
    expect(mails()[0]!.text).toContain('Your balance: 100 credits');
    expect(mails()[0]!.text).toContain('Payment reference: pi_3Nabc');
    const receipts = await db.anyFirst(
      sql.type(z.object({ source: z.string() }))`select source from email_log where to_addresses @> array['buyer@example.com']`,
    );
    expect(receipts).toEqual(['api:receipt:purchase', 'api:receipt:purchase']);
  });

  it('refuses the same reference with other figures, and callers without the proxy secret', async () => {
    await call('POST', '/internal/credits/purchase', { proxy: true, body: { ...purchase, paymentReference: 'pi_fixed' } });
    const changed = await call('POST', '/internal/credits/purchase', { proxy: true, body: { ...purchase, paymentReference: 'pi_fixed', credits: 1000 } });
    expect(changed).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    const otherBuyer = await call('POST', '/internal/credits/purchase', {
      proxy: true,
      body: { ...purchase, paymentReference: 'pi_fixed', email: 'thief@example.com' },
    });
    expect(otherBuyer.status).toBe(409);
    const stranger = await call('POST', '/internal/credits/purchase', { body: { ...purchase, paymentReference: 'pi_none' } });
    expect(stranger.status).toBe(403);
    const wrong = await call('POST', '/internal/credits/purchase', {
      headers: { 'x-proxy-secret': 'guess' },
      body: { ...purchase, paymentReference: 'pi_none' },
    });
    expect(wrong.status).toBe(403);
    expect(
      await db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from credit_transactions where payment_reference = 'pi_none'`),
    ).toBe(0);
    expect(
      (await call('POST', '/internal/credits/purchase', { proxy: true, body: { ...purchase, paymentReference: 'pi_bad', currency: 'dollars' } })).status,
    ).toBe(400);
  });
});
