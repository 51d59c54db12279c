import { afterAll, expect, it } from 'vitest';
import { ensureConversionQueues, RECOVER_QUEUE } from '../../server/conversion-jobs/conversion-jobs.jobs.ts';
import { startBoss } from '../../server/queue/boss.ts';
import { createTestDatabase } from '../helpers/database.ts';

const database = await createTestDatabase();
const boss = await startBoss(database.url, { supervise: false, schedule: false, migrate: false });
afterAll(() => boss.stop({ graceful: false }));

it('the singleton recovery queue expires an active run in 30 s, also where the queue was made with the old policy', async () => {
  // how the queue was made before: pg-boss's 15-minute expiry, during which a crashed run blocks every recovery
  await boss.createQueue(RECOVER_QUEUE, { policy: 'singleton', retryLimit: 1 });
  expect((await boss.getQueue(RECOVER_QUEUE))?.expireInSeconds).toBe(900);
  await ensureConversionQueues(boss);
  expect(await boss.getQueue(RECOVER_QUEUE)).toMatchObject({ policy: 'singleton', expireInSeconds: 30, retryLimit: 1 });
});
