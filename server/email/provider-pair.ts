import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { readProviderPairSetting, PROVIDER_PAIR_SETTING } from './email.queries.ts';
import { withinTimeout } from './hook-timeout.ts';
import { ProviderName } from './types.ts';

export type ProviderPair = { primary: ProviderName; fallback?: ProviderName };

const ProviderPairSetting = z.object({ primary: ProviderName, fallback: ProviderName.nullish() });

/**
 * The provider pair: the `email.providers` settings row (`{"primary":
 * "provider_b", "fallback": "provider_a"}`) when present, else EMAIL_PRIMARY /
 * EMAIL_FALLBACK. A fallback equal to the primary means none. `settled` is
 * false when the row could not be read (timeout, database down): the caller
 * uses the environment pair for now and reads again next time.
 */
export async function readProviderPair(deps: Pick<Deps, 'config' | 'db' | 'log'>, timeoutMs: number): Promise<{ pair: ProviderPair; settled: boolean }> {
  const env: ProviderPair = { primary: deps.config.email.primary, fallback: deps.config.email.fallback };
  if (!deps.config.email.loggingEnabled) return { pair: env, settled: true };
  const read = await withinTimeout(readProviderPairSetting(deps.db), timeoutMs);
  if (!read.ok) {
    deps.log.warn({ err: read.error, timedOut: read.timedOut }, 'email provider pair setting unreadable; using EMAIL_PRIMARY/EMAIL_FALLBACK for now');
    return { pair: env, settled: false };
  }
  if (read.value === null) return { pair: env, settled: true };
  const parsed = ProviderPairSetting.safeParse(read.value);
  if (!parsed.success) {
    deps.log.error({ key: PROVIDER_PAIR_SETTING }, 'email provider pair setting is malformed; using EMAIL_PRIMARY/EMAIL_FALLBACK');
    return { pair: env, settled: true };
  }
  const { primary, fallback } = parsed.data;
  return { pair: { primary, fallback: fallback && fallback !== primary ? fallback : undefined }, settled: true };
}
