import v8 from 'node:v8';

/**
 * V8's own factor in Node 24 (`node --v8-options`: `--semi-space-growth-factor`, default 2), unless the
 * process was started with another: the pass hands back whatever the operator chose.
 */
const GROWTH_FACTOR_FLAG = '--semi-space-growth-factor';
const startingGrowthFactor = () => {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
    .map((argument) => argument.replace(/_/g, '-'))
    .findLast((argument) => argument.startsWith(`${GROWTH_FACTOR_FLAG}=`));
  return given?.slice(GROWTH_FACTOR_FLAG.length + 1) ?? '2';
};

/** Passes under way: the flag belongs to the whole process, so it goes back only when the last of them ends. */
let holding = 0;

/**
 * Runs `work` with the young generation held at the size it has. Drawing a long
 * document's tagged PDF makes short-lived garbage fast enough that V8 doubles
 * the young generation (32 → 64 MB on the 1,000-page bench), and the grown
 * space stays resident for the rest of the process. With growth off for the
 * pass, V8 scavenges more often instead. The flag is process-wide (worker
 * threads included), so it is set only while a pass runs.
 */
export async function whileYoungGenerationHeld<T>(work: () => Promise<T>): Promise<T> {
  if (holding++ === 0) v8.setFlagsFromString(`${GROWTH_FACTOR_FLAG}=1`);
  try {
    return await work();
  } finally {
    if (--holding === 0) v8.setFlagsFromString(`${GROWTH_FACTOR_FLAG}=${startingGrowthFactor()}`);
  }
}
