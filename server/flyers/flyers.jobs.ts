import type { DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import { type Boss, oncePerBoss } from '../queue/boss.ts';

export const FLYER_QUEUE = 'flyer.render';
/** A crashed render comes back after its expiry; the claim makes the late one harmless. */
const FLYER_POLICY = { retryLimit: 2, retryDelay: 30, expireInSeconds: 300 } as const;

export const FlyerJobData = z.object({ flyerJobId: z.uuid() });

export const ensureFlyerQueue = oncePerBoss(async (boss) => {
  await boss.createQueue(FLYER_QUEUE, FLYER_POLICY);
});

export async function enqueueFlyerRender(boss: Boss, tx: DatabaseTransactionConnection, flyerJobId: string): Promise<void> {
  await ensureFlyerQueue(boss);
  await boss.send(FLYER_QUEUE, { flyerJobId }, { ...FLYER_POLICY, id: derivedUuid(`flyer:${flyerJobId}`), db: bossDb(tx) });
}
