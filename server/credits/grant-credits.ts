import { z } from 'zod';
import { sqlState } from '../db/sql-state.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { DomainError } from '../errors.ts';
import { escapeHtml } from '../sharing/html.ts';
import {
  type CreditTransaction,
  customerExists,
  findPurchaseByReference,
  insertCreditTransaction,
  recordReceipt,
  upsertCustomerByEmail,
} from './credit-transactions.queries.ts';
import { insertAdminAudit } from '../db/admin-audit.ts';

/** One grant or purchase; a typo of an extra digit should not hand out millions. */
const MAX_CREDITS_PER_TRANSACTION = 1_000_000;

const Credits = z.number().int().min(1).max(MAX_CREDITS_PER_TRANSACTION);
const Email = z.email().max(320);

/** Exactly one of `email` and `customerId` names the customer. */
const CustomerRef = z.object({ email: Email.optional(), customerId: z.uuid().optional() });
const oneCustomer = <T extends { email?: string; customerId?: string }>(value: T) => (value.email === undefined) !== (value.customerId === undefined);

export const GrantCreditsInput = CustomerRef.extend({ credits: Credits, reason: z.string().trim().min(1).max(500) }).refine(oneCustomer, {
  message: 'Give either email or customerId',
  path: ['email'],
});
export type GrantCreditsInput = z.infer<typeof GrantCreditsInput>;

export const RecordPurchaseInput = CustomerRef.extend({
  credits: Credits,
  /** The payment provider's reference (charge, session or invoice id): a webhook delivered twice credits once. */
  paymentReference: z.string().trim().min(1).max(200),
  amountCents: z.number().int().min(0).max(100_000_000),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/)
    .transform((value) => value.toUpperCase()),
}).refine(oneCustomer, { message: 'Give either email or customerId', path: ['email'] });
export type RecordPurchaseInput = z.infer<typeof RecordPurchaseInput>;

export const CreditReceipt = z.object({
  transactionId: z.uuid(),
  kind: z.enum(['grant', 'purchase']),
  customerId: z.uuid(),
  email: z.string(),
  credits: z.number().int(),
  balance: z.number().int(),
  /** The library's answer for the receipt email; null when none was tried (a repeated purchase call). */
  receiptStatus: z.enum(['sent', 'deferred', 'suppressed', 'failed']).nullable(),
  receiptSent: z.boolean(),
  /** True when this payment reference was already recorded: nothing was credited or mailed again. */
  duplicate: z.boolean(),
});
export type CreditReceipt = z.infer<typeof CreditReceipt>;

type CreditDeps = Pick<Deps, 'db' | 'config'> & { email: EmailService };

async function resolveCustomer(db: Parameters<typeof upsertCustomerByEmail>[0], ref: { email?: string; customerId?: string }): Promise<string> {
  if (ref.email) return upsertCustomerByEmail(db, ref.email.trim().toLowerCase());
  if (!(await customerExists(db, ref.customerId!))) throw new DomainError('CUSTOMER_NOT_FOUND', 'No customer with that id');
  return ref.customerId!;
}

/**
 * POST /api/admin/credits: an admin adds credits to a customer (by address,
 * creating the customer when the address is new, or by id). The credits, the
 * transaction row and the `credit_grant` audit entry commit together; the
 * receipt goes out after the commit and its status is kept on the row.
 */
export async function grantCredits(deps: CreditDeps, admin: { id: string }, input: GrantCreditsInput): Promise<CreditReceipt> {
  const transaction = await deps.db.transaction(async (tx) => {
    const customerId = await resolveCustomer(tx, input);
    const row = await insertCreditTransaction(tx, { kind: 'grant', customerId, credits: input.credits, reason: input.reason, actorId: admin.id });
    await insertAdminAudit(tx, {
      actorId: admin.id,
      action: 'credit_grant',
      subject: row.email,
      details: { customerId, credits: input.credits, reason: input.reason, balance: row.balanceAfter, transactionId: row.id },
    });
    return row;
  });
  return sendReceipt(deps, transaction);
}

/**
 * POST /internal/credits/purchase: a payment provider's webhook handler
 * records a paid purchase. Keyed on the payment reference: a repeated call
 * answers the first call's transaction with `duplicate: true` and neither
 * credits nor mails again; the same reference with other figures is a 409.
 */
export async function recordPurchase(deps: CreditDeps, input: RecordPurchaseInput): Promise<CreditReceipt> {
  const earlier = await findPurchaseByReference(deps.db, input.paymentReference);
  if (earlier) return answerRepeat(earlier, input);
  let transaction: CreditTransaction;
  try {
    transaction = await deps.db.transaction(async (tx) => {
      const customerId = await resolveCustomer(tx, input);
      return insertCreditTransaction(tx, {
        kind: 'purchase',
        customerId,
        credits: input.credits,
        amountCents: input.amountCents,
        currency: input.currency,
        paymentReference: input.paymentReference,
      });
    });
  } catch (error) {
    // Two deliveries of one webhook at the same moment: the unique reference lets one in.
    const winner = sqlState(error) === '23505' ? await findPurchaseByReference(deps.db, input.paymentReference) : null;
    if (!winner) throw error;
    return answerRepeat(winner, input);
  }
  return sendReceipt(deps, transaction);
}

function answerRepeat(earlier: CreditTransaction, input: RecordPurchaseInput): CreditReceipt {
  const sameCustomer = input.customerId ? earlier.customerId === input.customerId : earlier.email === input.email!.trim().toLowerCase();
  if (!sameCustomer || earlier.credits !== input.credits || earlier.amountCents !== input.amountCents || earlier.currency !== input.currency) {
    throw new DomainError('CONFLICT', 'That payment reference was already recorded with other figures');
  }
  return toReceipt(earlier, earlier.receiptStatus, true);
}

function toReceipt(row: CreditTransaction, receiptStatus: CreditTransaction['receiptStatus'], duplicate: boolean): CreditReceipt {
  return {
    transactionId: row.id,
    kind: row.kind,
    customerId: row.customerId,
    email: row.email,
    credits: row.credits,
    balance: row.balanceAfter,
    receiptStatus,
    receiptSent: receiptStatus === 'sent' || receiptStatus === 'deferred',
    duplicate,
  };
}

function formatAmount(cents: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

/** The receipt: amount (purchases), credits and the balance after; keyed on the transaction so a retried send never doubles it. */
async function sendReceipt(deps: CreditDeps, row: CreditTransaction): Promise<CreditReceipt> {
  const s = (n: number) => (n === 1 ? '' : 's');
  const paid = row.kind === 'purchase' && row.amountCents !== null && row.currency ? formatAmount(row.amountCents, row.currency) : undefined;
  const lines = [
    row.kind === 'purchase' ? `Thank you for your purchase of ${row.credits} credit${s(row.credits)}.` : `You received ${row.credits} credit${s(row.credits)}.`,
    ...(paid ? [`Amount paid: ${paid}`] : []),
    ...(row.kind === 'grant' && row.reason ? [`Reason: ${row.reason}`] : []),
    `Credits added: ${row.credits}`,
    `Your balance: ${row.balanceAfter} credit${s(row.balanceAfter)} (one credit converts one page).`,
    ...(row.paymentReference ? [`Payment reference: ${row.paymentReference}`] : []),
  ];
  const result = await deps.email.send({
    category: 'transactional',
    source: `api:receipt:${row.kind}`,
    tags: [{ name: 'kind', value: 'receipt' }],
    idempotencyKey: `receipt:${row.id}`,
    to: row.email,
    subject:
      row.kind === 'purchase'
        ? `Your Folio receipt: ${row.credits} credit${s(row.credits)}`
        : `${row.credits} credit${s(row.credits)} added to your Folio account`,
    text: `${lines.join('\n')}\n\nBuy more credits: ${deps.config.product.purchaseUrl}`,
    html: `${lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}<p><a href="${escapeHtml(deps.config.product.purchaseUrl)}">Buy more credits</a></p>`,
  });
  await recordReceipt(deps.db, row.id, { status: result.status, logId: result.id });
  return toReceipt(row, result.status, false);
}
