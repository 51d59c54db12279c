import type { Deps } from '../deps.ts';
import type { ConversionEngine, CreateConversionEngine } from '../conversion/engine.ts';

export type EngineProvider = () => Promise<ConversionEngine>;

/**
 * The engine is built on first use (it starts worker threads) and shared by
 * the process. Loaded by path so the service only depends on the contract in
 * server/conversion/engine.ts.
 */
export function lazyEngine(deps: Pick<Deps, 'config' | 'log'>): EngineProvider & { close: () => Promise<void> } {
  let engine: Promise<ConversionEngine> | undefined;
  const provider = () => {
    engine ??= (async () => {
      const modulePath = '../conversion/create-conversion-engine.ts';
      const loaded = (await import(modulePath)) as { createConversionEngine: CreateConversionEngine };
      return loaded.createConversionEngine({ conversion: deps.config.conversion, log: deps.log });
    })();
    engine.catch(() => (engine = undefined));
    return engine;
  };
  return Object.assign(provider, {
    close: async () => {
      const current = engine;
      engine = undefined;
      if (current) await (await current.catch(() => undefined))?.close();
    },
  });
}
