import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.ts';
import { loadConfig } from '../../server/config.ts';
import { silentLog } from '../../server/log.ts';
import { systemClock } from '../../server/deps.ts';
import { createMetrics } from '../../server/metrics.ts';
import { withProcessServices } from '../../server/services.ts';

/**
 * A process builds its services once and hands them to the API and its
 * workers alike: a second conversion engine would start a second pool of
 * page workers sized to the machine's cores.
 */
describe('process services', () => {
  it('build one conversion engine, however many callers ask for it at once, and a new one only after close', async () => {
    const database = await createTestDatabase();
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, CONVERSION_POOL_SIZE: '1' });
    const core = { config, db: database.db, boss: undefined as never, log: silentLog, clock: systemClock, databaseUrl: database.url, metrics: createMetrics() };
    const services = withProcessServices(core);
    const engines = await Promise.all([services.deps.engine(), services.deps.engine(), services.deps.engine()]);
    expect(new Set(engines).size).toBe(1);
    expect(await services.deps.engine()).toBe(engines[0]);
    await services.close();
    const fresh = await services.deps.engine();
    expect(fresh).not.toBe(engines[0]);
    await services.close();
  });
});
