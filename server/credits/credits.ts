import { z } from 'zod';
import { sqlState } from '../db/sql-state.ts';
import { AnyRow, sql, type Database } from '../db/database.ts';
import { DomainError, isDomainError } from '../errors.ts';

/** SQLSTATEs raised by sql/002_credits.sql, mapped to our error codes. */
const CREDIT_ERRORS = {
  FC001: 'INSUFFICIENT_CREDITS',
  FC002: 'FREE_PAGE_LIMIT',
  FC003: 'CUSTOMER_NOT_FOUND',
  FC004: 'HOLD_NOT_FOUND',
  FC005: 'HOLD_ALREADY_RESOLVED',
} as const;

/** The 90-minute window of an on-demand job's hold (specification: funds hold). */
export const ON_DEMAND_HOLD_WINDOW_MS = 90 * 60 * 1000;
const FREE_TIER_PAGES = 10;

export type HoldOutcome = 'cancelled' | 'failed' | 'expired';
// Anything that can run a query: the pool or an open transaction.
type Queryable = Pick<Database, 'query' | 'one' | 'oneFirst' | 'maybeOne'>;

/** Runs a credit SQL call, turning our SQLSTATEs into typed DomainErrors. */
async function mapCreditErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const state = sqlState(error);
    const code = state ? CREDIT_ERRORS[state as keyof typeof CREDIT_ERRORS] : undefined;
    if (!code) throw error;
    const message =
      code === 'FREE_PAGE_LIMIT'
        ? 'This would exceed the 10 free lifetime pages'
        : code === 'INSUFFICIENT_CREDITS'
          ? 'Not enough credits'
          : (error as Error).message;
    throw new DomainError(code, message, { cause: error });
  }
}

/** deduct_credits: takes p_amount from a paid balance; returns what remains. */
export function deductCredits(db: Queryable, customerId: string, amount: number): Promise<number> {
  return mapCreditErrors(() => db.oneFirst(sql.type(z.object({ remaining: z.number() }))`select deduct_credits(${customerId}, ${amount}) as remaining`));
}

/** use_free_pages: spends free-tier pages; returns the lifetime total used. */
export function useFreePages(db: Queryable, customerId: string, pages: number): Promise<number> {
  return mapCreditErrors(() => db.oneFirst(sql.type(z.object({ used: z.number() }))`select use_free_pages(${customerId}, ${pages}) as used`));
}

/** Charges pages to the balance the customer's plan uses (credits or free pages): Preserve Formatting charges up front. */
export async function chargePages(db: Queryable, customerId: string, pages: number): Promise<void> {
  await mapCreditErrors(() => db.query(sql.type(AnyRow)`select charge_pages(${customerId}, ${pages})`));
}

/** Reserves an estimate for a job; refuses with INSUFFICIENT_CREDITS / FREE_PAGE_LIMIT before any work. */
export function createHold(db: Queryable, input: { customerId: string; amount: number; windowMs?: number; reference?: string }): Promise<string> {
  const windowSeconds = Math.ceil((input.windowMs ?? ON_DEMAND_HOLD_WINDOW_MS) / 1000);
  return mapCreditErrors(() =>
    db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      select create_credit_hold(${input.customerId}, ${input.amount}, make_interval(secs => ${windowSeconds}), ${input.reference ?? null}) as id`),
  );
}

/** Settles a hold to the actual charge. */
export async function settleHold(db: Queryable, holdId: string, actualAmount: number): Promise<void> {
  await mapCreditErrors(() => db.query(sql.type(AnyRow)`select settle_credit_hold(${holdId}, ${actualAmount})`));
}

/** Releases a hold without charging. */
export async function releaseHold(db: Queryable, holdId: string, outcome: HoldOutcome): Promise<void> {
  await mapCreditErrors(() => db.query(sql.type(AnyRow)`select release_credit_hold(${holdId}, ${outcome})`));
}

/** Moves an open hold's expiry (the batch lane's claim stretches it over the batch turnaround). */
export async function extendHold(db: Queryable, holdId: string, expiresAt: Date): Promise<void> {
  await mapCreditErrors(() => db.query(sql.type(AnyRow)`select extend_credit_hold(${holdId}, ${expiresAt.toISOString()}::timestamptz)`));
}

/** Frees every hold whose window has passed; the periodic sweep. */
export function expireHolds(db: Queryable): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`select expire_credit_holds(null) as count`);
}

export const Balance = z.object({
  planType: z.enum(['free', 'paid']),
  creditsRemaining: z.number(),
  creditsHeld: z.number(),
  freePagesUsed: z.number(),
  freePagesHeld: z.number(),
  freePagesLeft: z.number(),
});
export type Balance = z.infer<typeof Balance>;

export function getBalance(db: Queryable, customerId: string): Promise<Balance> {
  return db.one(sql.type(Balance)`
    select plan_type as "planType", credits_remaining as "creditsRemaining", credits_held as "creditsHeld",
           lifetime_free_pages_used as "freePagesUsed", free_pages_held as "freePagesHeld",
           greatest(0, ${FREE_TIER_PAGES} - lifetime_free_pages_used - free_pages_held) as "freePagesLeft"
      from customers where id = ${customerId}`);
}

/** Every "insufficient credits" answer carries PURCHASE_URL, in its message and its details. */
export function withPurchaseLink(error: unknown, purchaseUrl: string): unknown {
  if (!isDomainError(error) || (error.code !== 'INSUFFICIENT_CREDITS' && error.code !== 'FREE_PAGE_LIMIT')) return error;
  return new DomainError(error.code, `${error.message}. Buy credits: ${purchaseUrl}`, { context: { ...error.context, purchaseUrl }, cause: error });
}
