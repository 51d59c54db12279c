import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { findOrCreateUser } from '../../server/auth/users.ts';
import { recordEmailEvent } from '../../server/delivery-events/delivery-events.queries.ts';
import { removeSuppression } from '../../server/email-admin/email-admin.ts';
import type { SuppressionRow } from '../../server/email/email.queries.ts';
import { cachedSuppressionLookup, suppressionsChanged } from '../../server/email/suppression-cache.ts';
import { startEmailHarness, suppress } from './harness.ts';

const harness = await startEmailHarness();
beforeEach(() => harness.reset());

const message = { category: 'transactional' as const, to: 'Reader <reader@example.com>', subject: 'Your file is ready', text: 'Hello' };

describe('the library suppression cache', () => {
  it('answers an address it looked up moments ago without the database', async () => {
    const { email } = harness.library();
    expect(await email.send(message)).toMatchObject({ status: 'sent' });
    // A lookup would now hang past the hook timeout and log that it failed open.
    await withSuppressionsLockedElsewhere(async () => {
      expect(await email.send(message)).toMatchObject({ status: 'sent' });
    });
    expect(harness.logs.some((line) => line.msg === 'email suppression lookup failed; sending without it')).toBe(false);
  });

  it('still fails open for an address it has not seen', async () => {
    const { email } = harness.library();
    await email.send(message);
    await withSuppressionsLockedElsewhere(async () => {
      expect(await email.send({ ...message, to: 'other@example.com' })).toMatchObject({ status: 'sent' });
    });
    expect(harness.logs.some((line) => line.msg === 'email suppression lookup failed; sending without it' && line.timedOut === true)).toBe(true);
  });

  it('blocks at once an address a delivery event in this process suppressed', async () => {
    const { email } = harness.library();
    expect(await email.send(message)).toMatchObject({ status: 'sent' });
    await recordEmailEvent(harness.database.db, {
      provider: 'provider_b',
      providerMessageId: 'ses-bounce-1',
      event: 'bounced',
      to: ['reader@example.com'],
      suppress: { addresses: ['reader@example.com'], reason: 'hard_bounce' },
    });
    expect(await email.send(message)).toMatchObject({ status: 'suppressed', error: 'Recipient suppressed: hard bounce' });
  });

  it('blocks at once an address any statement of this process added', async () => {
    const { email } = harness.library();
    expect(await email.send(message)).toMatchObject({ status: 'sent' });
    await suppress(harness, 'reader@example.com', 'manual');
    expect(await email.send(message)).toMatchObject({ status: 'suppressed', error: 'Recipient suppressed: manual' });
  });

  it('sends at once to an address an admin of this process removed', async () => {
    const { email } = harness.library();
    await suppress(harness, 'reader@example.com', 'complaint');
    expect(await email.send(message)).toMatchObject({ status: 'suppressed' });
    const admin = await findOrCreateUser(harness.database.db, { subject: 'cache-admin', email: 'boss@folio.example' });
    await removeSuppression(harness.database.db, { email: 'reader@example.com', actorId: admin!.id });
    expect(await email.send(message)).toMatchObject({ status: 'sent' });
  });
});

describe('cachedSuppressionLookup', () => {
  const gone: SuppressionRow = { email: 'gone@example.com', reason: 'hard_bounce' };

  function counting(answer: (addresses: string[]) => Promise<SuppressionRow[]>) {
    const asked: string[][] = [];
    return {
      asked,
      lookup: (addresses: string[]) => {
        asked.push(addresses);
        return answer(addresses);
      },
    };
  }

  it('keeps answers, suppressed or not, for the cache time only', async () => {
    let now = 0;
    const { asked, lookup } = counting(async (addresses) => (addresses.includes(gone.email) ? [gone] : []));
    const cached = cachedSuppressionLookup(lookup, { ttlMs: 1_000, now: () => now });
    expect(await cached(['gone@example.com', 'fine@example.com'])).toEqual([gone]);
    now = 999;
    expect(await cached(['fine@example.com', 'gone@example.com'])).toEqual([gone]);
    expect(await cached(['fine@example.com', 'new@example.com'])).toEqual([]);
    expect(asked).toEqual([['gone@example.com', 'fine@example.com'], ['new@example.com']]);
    now = 1_000;
    await cached(['gone@example.com']);
    expect(asked.at(-1)).toEqual(['gone@example.com']);
  });

  it('does not keep an answer that was under way when the list changed', async () => {
    let release!: () => void;
    const { asked, lookup } = counting(() => new Promise((resolve) => (release = () => resolve([]))));
    const cached = cachedSuppressionLookup(lookup, { now: () => 0 });
    const before = cached(['gone@example.com']);
    suppressionsChanged();
    release();
    expect(await before).toEqual([]);
    const after = cached(['gone@example.com']);
    release();
    await after;
    expect(asked).toHaveLength(2);
  });

  it('keeps nothing from a failed lookup', async () => {
    let fail = true;
    const { asked, lookup } = counting(async () => {
      if (fail) throw new Error('database down');
      return [gone];
    });
    const cached = cachedSuppressionLookup(lookup, { now: () => 0 });
    await expect(cached(['gone@example.com'])).rejects.toThrow('database down');
    fail = false;
    expect(await cached(['gone@example.com'])).toEqual([gone]);
    expect(asked).toHaveLength(2);
  });
});

/** Another session (not this process's pools) holds the table locked, so a lookup would hang. */
async function withSuppressionsLockedElsewhere(run: () => Promise<void>) {
  const client = new pg.Client({ connectionString: harness.database.url });
  await client.connect();
  try {
    await client.query('begin');
    await client.query('lock table email_suppressions in access exclusive mode');
    await run();
  } finally {
    await client.query('rollback');
    await client.end();
  }
}
