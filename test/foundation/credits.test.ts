import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHold, deductCredits, expireHolds, getBalance, releaseHold, settleHold, useFreePages } from '../../server/credits/credits.ts';
import { sql } from '../../server/db/database.ts';
import type { DomainError } from '../../server/errors.ts';
import { createTestDatabase } from '../helpers/database.ts';

const { db } = await createTestDatabase({ poolSize: 20 });

async function newCustomer(plan: 'free' | 'paid', credits = 0) {
  const email = `c-${crypto.randomUUID()}@example.com`;
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into customers (email, plan_type, credits_remaining) values (${email}, ${plan}, ${credits}) returning id`);
}

async function settleAll<T>(count: number, run: () => Promise<T>) {
  return Promise.allSettled(Array.from({ length: count }, run));
}

describe('deduct_credits', () => {
  it('lets exactly 20 of 50 concurrent one-credit deductions through a balance of 20', async () => {
    const customer = await newCustomer('paid', 20);
    const results = await settleAll(50, () => deductCredits(db, customer, 1));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(20);
    expect(refused).toHaveLength(30);
    for (const r of refused) expect((r.reason as DomainError).code).toBe('INSUFFICIENT_CREDITS');
    expect((await getBalance(db, customer)).creditsRemaining).toBe(0);
  });

  it('raises a typed error for an unknown customer and refuses negative amounts', async () => {
    await expect(deductCredits(db, crypto.randomUUID(), 1)).rejects.toMatchObject({ code: 'CUSTOMER_NOT_FOUND' });
    const customer = await newCustomer('paid', 5);
    await expect(deductCredits(db, customer, -1)).rejects.toThrow();
    expect((await getBalance(db, customer)).creditsRemaining).toBe(5);
  });
});

describe('use_free_pages', () => {
  it('lets exactly 10 of 50 concurrent one-page uses through the lifetime limit', async () => {
    const customer = await newCustomer('free');
    const results = await settleAll(50, () => useFreePages(db, customer, 1));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const r of refused) expect((r.reason as DomainError).code).toBe('FREE_PAGE_LIMIT');
    expect((await getBalance(db, customer)).freePagesUsed).toBe(10);
  });

  it('refuses a request that would cross 10 without spending any of it', async () => {
    const customer = await newCustomer('free');
    await useFreePages(db, customer, 7);
    await expect(useFreePages(db, customer, 4)).rejects.toMatchObject({ code: 'FREE_PAGE_LIMIT' });
    expect((await getBalance(db, customer)).freePagesUsed).toBe(7);
  });
});

describe('credit holds', () => {
  it('settles a hold to the actual charge and frees the rest', async () => {
    const customer = await newCustomer('paid', 100);
    const hold = await createHold(db, { customerId: customer, amount: 40 });
    expect(await getBalance(db, customer)).toMatchObject({ creditsRemaining: 100, creditsHeld: 40 });
    await expect(deductCredits(db, customer, 61)).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    await settleHold(db, hold, 35);
    expect(await getBalance(db, customer)).toMatchObject({ creditsRemaining: 65, creditsHeld: 0 });
    await expect(settleHold(db, hold, 1)).rejects.toMatchObject({ code: 'HOLD_ALREADY_RESOLVED' });
  });

  it('releases a hold with its outcome and charges nothing', async () => {
    const customer = await newCustomer('paid', 10);
    const hold = await createHold(db, { customerId: customer, amount: 10 });
    await expect(createHold(db, { customerId: customer, amount: 1 })).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    await releaseHold(db, hold, 'cancelled');
    expect(await getBalance(db, customer)).toMatchObject({ creditsRemaining: 10, creditsHeld: 0 });
    const row = await db.one(sql.type(z.object({ status: z.string(), outcome: z.string() }))`select status, outcome from credit_holds where id = ${hold}`);
    expect(row).toEqual({ status: 'released', outcome: 'cancelled' });
  });

  it('draws free-tier holds from the 10 lifetime pages', async () => {
    const customer = await newCustomer('free');
    const hold = await createHold(db, { customerId: customer, amount: 8 });
    await expect(useFreePages(db, customer, 3)).rejects.toMatchObject({ code: 'FREE_PAGE_LIMIT' });
    await settleHold(db, hold, 6);
    expect(await getBalance(db, customer)).toMatchObject({ freePagesUsed: 6, freePagesHeld: 0, freePagesLeft: 4 });
  });

  it('frees the credits of a hold whose window passed', async () => {
    const customer = await newCustomer('paid', 10);
    const hold = await createHold(db, { customerId: customer, amount: 10, windowMs: 1000 });
    await expect(deductCredits(db, customer, 5)).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    await db.query(sql.type(z.object({}))`update credit_holds set expires_at = now() - interval '1 second' where id = ${hold}`);
    // The balance check itself frees an expired hold; no sweep needed first.
    expect(await deductCredits(db, customer, 5)).toBe(5);
    expect(await expireHolds(db)).toBe(0);
    const row = await db.one(sql.type(z.object({ status: z.string(), outcome: z.string() }))`select status, outcome from credit_holds where id = ${hold}`);
    expect(row).toEqual({ status: 'expired', outcome: 'expired' });
    // A late settle still charges what the work cost.
    await settleHold(db, hold, 3);
    expect((await getBalance(db, customer)).creditsRemaining).toBe(2);
  });

  it('the sweep expires holds of every customer', async () => {
    const a = await newCustomer('paid', 5);
    const b = await newCustomer('free');
    await createHold(db, { customerId: a, amount: 5 });
    await createHold(db, { customerId: b, amount: 5 });
    await db.query(sql.type(z.object({}))`update credit_holds set expires_at = now() - interval '1 minute' where customer_id in (${a}, ${b})`);
    expect(await expireHolds(db)).toBe(2);
    expect(await getBalance(db, a)).toMatchObject({ creditsHeld: 0 });
    expect(await getBalance(db, b)).toMatchObject({ freePagesHeld: 0, freePagesLeft: 10 });
  });
});
