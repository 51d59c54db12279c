import { getBalance } from '../credits/credits.ts';
import { escapeHtml } from '../sharing/html.ts';
import { spendable } from '../intake/handle-inbound-message.ts';
import { BucketError, describeBucketError } from './customer-bucket.ts';
import type { ImportDeps } from './import-runtime.ts';
import { listAll, recordObjects } from './import-objects.ts';
import { openConnectionBucket } from './manage-storage-connections.ts';
import { enqueueObjectImport, enqueueOutputWrite } from './storage.jobs.ts';
import {
  claimPauseNotice,
  markListed,
  releasePauseNotice,
  resumeFromPause,
  selectConnection,
  selectDueWatches,
  selectEndedConversions,
  selectOldestWaitingPages,
  selectOwnerContact,
  selectPausedConnections,
  selectWaitingImports,
} from './storage.queries.ts';

/**
 * Lists a watched connection's prefix and imports what it has not seen (the
 * (connection, key, ETag) constraint decides, so an object is converted once
 * however often it is listed). A bucket that refuses is logged and tried at
 * the next interval; the listing time is recorded either way.
 */
export async function listWatchedPrefix(deps: ImportDeps, connectionId: string): Promise<{ queued: number } | undefined> {
  const row = await selectConnection(deps.db, connectionId);
  if (!row?.watched || row.watchState !== 'active') return undefined;
  await markListed(deps.db, row.id, deps.clock.now());
  const bucket = openConnectionBucket(deps, row);
  try {
    const { objects } = await listAll(bucket, row.prefix);
    const counts = await recordObjects(deps, row, objects, 'watch');
    if (counts.queued > 0) deps.log.info({ event: 'storage_watch_found', connectionId: row.id, queued: counts.queued }, 'storage: watch found new objects');
    return { queued: counts.queued };
  } catch (error) {
    if (!(error instanceof BucketError)) throw error;
    deps.log.warn({ event: 'storage_watch_list_failed', connectionId: row.id, error: describeBucketError(error) }, 'storage: watch could not list');
    return undefined;
  } finally {
    bucket.close();
  }
}

/**
 * A connection paused for credits resumes once the owner's spendable balance
 * covers the oldest parked file's pages (not merely one page: a balance that
 * covers nothing parked would pause again at once, and mail again); its
 * parked imports are queued again in order.
 */
async function resumeIfFunded(deps: ImportDeps, connectionId: string): Promise<boolean> {
  const row = await selectConnection(deps.db, connectionId);
  if (row?.watchState !== 'paused_credits') return false;
  const owner = await selectOwnerContact(deps.db, row.ownerId);
  const needed = (await selectOldestWaitingPages(deps.db, row.id)) ?? 1;
  if (spendable(await getBalance(deps.db, owner.customerId)).available < needed) return false;
  if (!(await resumeFromPause(deps.db, row.id))) return false;
  await deps.importer.queuesReady();
  for (const id of await selectWaitingImports(deps.db, row.id, 1000)) await enqueueObjectImport(deps.boss, id);
  deps.log.info({ event: 'storage_watch_resumed', connectionId: row.id }, 'storage: credits topped up; connection resumed');
  return true;
}

/**
 * The one-minute tick (a pg-boss schedule, one leader): paused connections
 * that can pay again resume, due watches list their prefix, and imports whose
 * conversion ended get their write-back job.
 */
export async function runWatchTick(deps: ImportDeps): Promise<{ resumed: number; listed: number; outputs: number }> {
  let resumed = 0;
  for (const id of await selectPausedConnections(deps.db)) if (await resumeIfFunded(deps, id)) resumed++;
  const due = await selectDueWatches(deps.db, deps.clock.now());
  for (const id of due) await listWatchedPrefix(deps, id);
  const ended = await selectEndedConversions(deps.db);
  if (ended.length > 0) await deps.importer.queuesReady();
  for (const id of ended) await enqueueOutputWrite(deps.boss, id);
  return { resumed, listed: due.length, outputs: ended.length };
}

/**
 * Tells a watched connection's owner, once per pause, that the watch stopped
 * because credits ran out. The claim on the row makes a job received twice
 * mail once; a send that fails releases it and throws for the queue's retry.
 */
export async function sendPauseNotice(deps: ImportDeps, connectionId: string, idempotencyKey: string): Promise<boolean> {
  if (!(await claimPauseNotice(deps.db, connectionId))) return false;
  const row = await selectConnection(deps.db, connectionId);
  if (!row) return false;
  const owner = await selectOwnerContact(deps.db, row.ownerId);
  const where = `s3://${row.bucket}/${row.prefix}`;
  const text = [
    `Your Folio watch on ${where} has stopped: your credits ran out, so new PDFs there are not being converted.`,
    '',
    `Top up your balance (${deps.config.product.purchaseUrl}); the watch resumes by itself within a minute once the balance covers the next waiting file, and converts the files that arrived meanwhile.`,
  ].join('\n');
  const result = await deps.email.send({
    category: 'notification',
    source: 'storage:watch-paused',
    to: owner.email,
    subject: 'Your Folio watch has stopped: credits ran out',
    text,
    html: `<p>${escapeHtml(text).replaceAll('\n\n', '</p><p>').replaceAll('\n', '<br>')}</p>`,
    idempotencyKey,
  });
  if (!result.ok && result.status === 'failed') {
    await releasePauseNotice(deps.db, connectionId);
    throw new Error(`storage pause notice not sent: ${result.error}`);
  }
  return true;
}
