import type { Deps } from '../deps.ts';
import { createBatchControl } from './bedrock-batch.ts';

/**
 * A user's cancel or process now stops the remote batch job at once, best
 * effort: when this fails the row keeps its reason and the driver stops the
 * job at its next poll.
 */
export async function stopRemoteJob(deps: Pick<Deps, 'config' | 'log'>, jobArn: string): Promise<boolean> {
  try {
    await createBatchControl(deps.config.conversion.bedrock).stopJob(jobArn);
    return true;
  } catch (error) {
    deps.log.warn({ err: error, jobArn }, 'stopping the batch job failed; the driver stops it at its next poll');
    return false;
  }
}
