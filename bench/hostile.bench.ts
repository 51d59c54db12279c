import { loadConfig } from '../server/config.ts';
import { createConversionEngine } from '../server/conversion/create-conversion-engine.ts';
import { silentLog } from '../server/log.ts';
import { probeSet } from '../test/hostile/probes.ts';
import { report } from './report.ts';

/**
 * The hostile probe set (test/hostile/probes.ts) through the engine as the
 * server runs it (upload's inspect, then page 1 converted in the page pool,
 * worker threads in this process): the process's peak RSS over each probe
 * and over the whole set, and how long each took. Aim: under 1.5 GB.
 */
export async function run(): Promise<void> {
  const conversion = loadConfig({ ...process.env }).conversion;
  const engine = createConversionEngine({ conversion, log: silentLog });
  let peak = 0;
  let overall = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 25);
  try {
    for (const probe of probeSet()) {
      peak = process.memoryUsage.rss();
      const started = performance.now();
      let outcome = 'converted';
      try {
        const bytes = new Uint8Array(probe.bytes());
        await engine.inspect(bytes);
        const [page] = await engine.convertPages(bytes, { pages: [1], backend: 'local' });
        if (page?.warnings.length) outcome = `converted with ${page.warnings.length} warning(s)`;
      } catch (error) {
        outcome = (error as { code?: string }).code ?? `error: ${(error as Error).message}`;
      }
      peak = Math.max(peak, process.memoryUsage.rss());
      overall = Math.max(overall, peak);
      report('hostile', `peak RSS: ${probe.name}`, peak / 1024 / 1024, 'MB', { outcome, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) });
    }
    report('hostile', 'peak RSS over the hostile set', overall / 1024 / 1024, 'MB', { aim: '< 1536 MB', poolSize: conversion.poolSize });
  } finally {
    clearInterval(timer);
    await engine.close();
  }
}
