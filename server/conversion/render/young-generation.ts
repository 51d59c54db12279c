import v8 from 'node:v8';

/**
 * V8's own factor in Node 24 (`node --v8-options`: `--semi-space-growth-factor`, default 2), unless the
 * process was started with another: a hold hands back whatever the operator chose.
 */
const GROWTH_FACTOR_FLAG = '--semi-space-growth-factor';
const startingGrowthFactor = () => {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
    .map((argument) => argument.replace(/_/g, '-'))
    .findLast((argument) => argument.startsWith(`${GROWTH_FACTOR_FLAG}=`));
  return given?.slice(GROWTH_FACTOR_FLAG.length + 1) ?? '2';
};

/** Holds in force: the flag belongs to the whole process, so it goes back only when the last of them is released. */
let holding = 0;

/**
 * Holds V8's young generation at the size it has until the returned release is
 * called (once counts; later calls do nothing). A long document's render makes
 * short-lived garbage fast (the spool's JSON as pages come in, then pdfkit
 * drawing the tagged PDF), and V8 answers by doubling the young generation
 * (16 → 32 → 64 MB on the engine's thread, 1,000-page bench), which then stays
 * resident for the rest of the process. Held, V8 scavenges more often instead.
 * The flag is process-wide, worker threads included, so it is set only while
 * a hold is in force; `--max-semi-space-size` at start would cap every thread
 * for the process's whole life (README, memory).
 */
export function holdYoungGeneration(): () => void {
  if (holding++ === 0) v8.setFlagsFromString(`${GROWTH_FACTOR_FLAG}=1`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holding === 0) v8.setFlagsFromString(`${GROWTH_FACTOR_FLAG}=${startingGrowthFactor()}`);
  };
}
