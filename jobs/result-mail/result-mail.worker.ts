import type { Deps } from '../../server/deps.ts';
import { ensureResultMailQueue, RESULT_MAIL_QUEUE, ResultMailJob } from '../../server/result-mail/result-mail.jobs.ts';
import { sendResultMail } from '../../server/result-mail/send-result-mail.ts';
import { resolveSigningSecrets } from '../../server/secrets.ts';

/** Conversion result mail: one job per event of an owner who opted in (queued by the outbox dispatch). */
export async function registerResultMailJobs(deps: Deps): Promise<void> {
  await ensureResultMailQueue(deps.boss);
  const mailDeps = { ...deps, downloadSecret: resolveSigningSecrets(deps.config).download };
  await deps.boss.work(RESULT_MAIL_QUEUE, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
    const parsed = ResultMailJob.safeParse(job?.data);
    if (!parsed.success) {
      deps.log.error({ jobId: job?.id }, 'result mail job with a bad payload dropped');
      return;
    }
    await sendResultMail(mailDeps, parsed.data.eventId);
  });
}
