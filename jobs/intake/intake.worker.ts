import type { Deps } from '../../server/deps.ts';
import { cleanUpMessage } from '../../server/intake/clean-up-message.ts';
import { finishMailedConversion } from '../../server/intake/finish-mailed-conversion.ts';
import { giveUpOnMessage } from '../../server/intake/give-up-on-message.ts';
import { handleInboundMessage } from '../../server/intake/handle-inbound-message.ts';
import type { IntakeDeps } from '../../server/intake/intake-deps.ts';
import {
  ensureIntakeQueues,
  INTAKE_CLEANUP_QUEUE,
  INTAKE_DEAD_LETTER_QUEUE,
  INTAKE_FINISH_QUEUE,
  INTAKE_MESSAGE_QUEUE,
  INTAKE_SWEEP_QUEUE,
  IntakeJob,
} from '../../server/intake/intake.jobs.ts';
import { createConversionWatch, sweepEndedConversions } from '../../server/intake/watch-conversions.ts';
import { resolveSigningSecrets } from '../../server/secrets.ts';

/**
 * Messages handled at once per process. Parsing and opening a PDF are short
 * (the conversion itself runs in the chunk workers), but a 50 MB message is
 * held about three times over while parsed (raw, decoded attachment, PDF
 * copy): two at once bound that near 300 MB however the mail arrives.
 */
const MESSAGE_CONCURRENCY = 2;

/** What a test or an entry file may keep: the handlers' deps (to run a step again) and the watch to close. */
type IntakeWorkers = { deps: IntakeDeps; close: () => void };

/**
 * The intake's queues: each message (parse → reply or convert), each ended
 * conversion (reply, log, cleanup), the cleanup, the one-minute sweep, and
 * the dead-letter consumer. Payloads are parsed as untrusted.
 */
export async function registerIntakeJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<IntakeWorkers> {
  const watch = createConversionWatch(deps);
  const intakeDeps: IntakeDeps = {
    ...deps,
    watchConversion: (messageId, fileId) => watch.watch(messageId, fileId),
    downloadSecret: resolveSigningSecrets(deps.config).download,
  };

  await ensureIntakeQueues(deps.boss);
  const each =
    (handle: (messageId: string) => Promise<unknown>) =>
    async ([job]: Array<{ data: unknown }>) => {
      if (job) await handle(IntakeJob.parse(job.data).messageId);
    };
  await deps.boss.work(
    INTAKE_MESSAGE_QUEUE,
    { batchSize: 1, localConcurrency: MESSAGE_CONCURRENCY, pollingIntervalSeconds: 0.5 },
    each((id) => handleInboundMessage(intakeDeps, id)),
  );
  await deps.boss.work(
    INTAKE_FINISH_QUEUE,
    { batchSize: 1, localConcurrency: 2, pollingIntervalSeconds: 0.5 },
    each((id) => finishMailedConversion(intakeDeps, id)),
  );
  await deps.boss.work(
    INTAKE_CLEANUP_QUEUE,
    { batchSize: 1 },
    each((id) => cleanUpMessage(intakeDeps, id)),
  );
  await deps.boss.work(INTAKE_DEAD_LETTER_QUEUE, { batchSize: 1 }, async ([job]) => {
    if (job) await giveUpOnMessage(intakeDeps, job.data);
  });
  await deps.boss.work(INTAKE_SWEEP_QUEUE, { batchSize: 1 }, async () => {
    await sweepEndedConversions(deps);
  });
  if (options.schedule !== false) await deps.boss.schedule(INTAKE_SWEEP_QUEUE, '* * * * *');
  return { deps: intakeDeps, close: () => watch.close() };
}
