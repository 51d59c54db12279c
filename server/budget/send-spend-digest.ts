import type { Deps } from '../deps.ts';
import type { OutOfBandOutcome } from '../out-of-band/out-of-band-sender.ts';
import { formatUsd, isoDate } from './budget-periods.ts';
import { batchSavings, spendByBackend, spendByCustomer, sumSpend } from './budget.queries.ts';

/** Customers named in the digest; the rest are one line. */
const DIGEST_CUSTOMERS = 10;

export type SpendDigest = {
  day: string;
  totalUsd: number;
  byBackend: Array<{ backend: string; usd: number }>;
  byCustomer: Array<{ customer: string; usd: number }>;
  batchSavingsUsd: number;
};

/** Yesterday's (UTC) model spend: total, per backend, top customers, and what the batch lane saved. */
export async function readSpendDigest(deps: Pick<Deps, 'db' | 'clock'>): Promise<SpendDigest> {
  const now = deps.clock.now();
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const from = new Date(to.getTime() - 86_400_000);
  const [totalUsd, byBackend, byCustomer, batchSavingsUsd] = await Promise.all([
    sumSpend(deps.db, from, to),
    spendByBackend(deps.db, from, to),
    spendByCustomer(deps.db, from, to, DIGEST_CUSTOMERS),
    batchSavings(deps.db, from, to),
  ]);
  return { day: isoDate(from), totalUsd, byBackend: [...byBackend], byCustomer: [...byCustomer], batchSavingsUsd };
}

/** The daily digest, out of band; keyed by its day so a retried run mails once. */
export async function sendSpendDigest(deps: Pick<Deps, 'db' | 'clock' | 'outOfBand'>): Promise<{ digest: SpendDigest; outcome: OutOfBandOutcome }> {
  const digest = await readSpendDigest(deps);
  const lines = [
    `Model spend on ${digest.day} (UTC): ${formatUsd(digest.totalUsd)}`,
    '',
    'By backend:',
    ...(digest.byBackend.length ? digest.byBackend.map((row) => `  ${row.backend}: ${formatUsd(row.usd)}`) : ['  (none)']),
    '',
    `Top ${DIGEST_CUSTOMERS} customers:`,
    ...(digest.byCustomer.length ? digest.byCustomer.map((row) => `  ${row.customer}: ${formatUsd(row.usd)}`) : ['  (none)']),
    '',
    `Batch lane savings: ${formatUsd(digest.batchSavingsUsd)}`,
  ];
  const outcome = await deps.outOfBand.send({
    source: 'spend_digest',
    subject: `Folio spend ${digest.day}: ${formatUsd(digest.totalUsd)}`,
    text: lines.join('\n'),
    key: `spend-digest:${digest.day}`,
  });
  return { digest, outcome };
}
