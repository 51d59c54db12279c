import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

type Queryable = Pick<Database, 'query' | 'one' | 'oneFirst' | 'maybeOne'>;

export const CreditTransaction = z.object({
  id: z.uuid(),
  kind: z.enum(['grant', 'purchase']),
  customerId: z.uuid(),
  email: z.string(),
  credits: z.number().int(),
  amountCents: z.number().nullable(),
  currency: z.string().nullable(),
  paymentReference: z.string().nullable(),
  reason: z.string().nullable(),
  balanceAfter: z.number().int(),
  receiptStatus: z.enum(['sent', 'deferred', 'suppressed', 'failed']).nullable(),
  createdAt: z.date(),
});
export type CreditTransaction = z.infer<typeof CreditTransaction>;

const columns = sql.fragment`t.id, t.kind, t.customer_id as "customerId", c.email, t.credits, t.amount_cents::float8 as "amountCents", t.currency,
  t.payment_reference as "paymentReference", t.reason, t.balance_after as "balanceAfter", t.receipt_status as "receiptStatus", t.created_at as "createdAt"`;

/**
 * The customer an address names, created when it is new: credits granted or
 * bought before a first sign-in wait on the customer row that sign-in (and
 * convert-by-email) will use.
 */
export function upsertCustomerByEmail(db: Queryable, email: string): Promise<string> {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into customers (email) values (${email}) on conflict (email) do update set email = excluded.email returning id`);
}

export function customerExists(db: Queryable, customerId: string): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ found: z.boolean() }))`select exists (select 1 from customers where id = ${customerId}) as found`);
}

/** Adds the credits and writes the transaction row with the new balance, in the caller's transaction. */
export async function insertCreditTransaction(
  db: Queryable,
  row: {
    kind: 'grant' | 'purchase';
    customerId: string;
    credits: number;
    amountCents?: number;
    currency?: string;
    paymentReference?: string;
    reason?: string;
    actorId?: string;
  },
): Promise<CreditTransaction> {
  const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into credit_transactions (kind, customer_id, credits, amount_cents, currency, payment_reference, reason, actor_id, balance_after)
    values (${row.kind}, ${row.customerId}, ${row.credits}, ${row.amountCents ?? null}, ${row.currency ?? null}, ${row.paymentReference ?? null},
            ${row.reason ?? null}, ${row.actorId ?? null}, grant_credits(${row.customerId}, ${row.credits}))
    returning id`);
  return findCreditTransaction(db, id) as Promise<CreditTransaction>;
}

function findCreditTransaction(db: Queryable, id: string): Promise<CreditTransaction | null> {
  return db.maybeOne(sql.type(CreditTransaction)`select ${columns} from credit_transactions t join customers c on c.id = t.customer_id where t.id = ${id}`);
}

export function findPurchaseByReference(db: Queryable, paymentReference: string): Promise<CreditTransaction | null> {
  return db.maybeOne(sql.type(CreditTransaction)`
    select ${columns} from credit_transactions t join customers c on c.id = t.customer_id where t.payment_reference = ${paymentReference}`);
}

export async function recordReceipt(db: Queryable, id: string, receipt: { status: string; logId?: string }): Promise<void> {
  await db.query(
    sql.type(AnyRow)`update credit_transactions set receipt_status = ${receipt.status}, receipt_log_id = ${receipt.logId ?? null} where id = ${id}`,
  );
}
