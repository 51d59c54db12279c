import type { Deps } from '../deps.ts';
import { createBatchControl } from './bedrock-batch.ts';

/**
 * A user's cancel or process now stops the remote batch job at once, best
 * effort: when this fails the row keeps its reason and the driver stops the
 * job at its next poll.
 */
/** One control client per Bedrock configuration: cancels and process-now share its connections. */
const controls = new WeakMap<Deps['config']['conversion']['bedrock'], ReturnType<typeof createBatchControl>>();

export async function stopRemoteJob(deps: Pick<Deps, 'config' | 'log'>, jobArn: string): Promise<boolean> {
  const settings = deps.config.conversion.bedrock;
  try {
    let control = controls.get(settings);
    if (!control) controls.set(settings, (control = createBatchControl(settings)));
    await control.stopJob(jobArn);
    return true;
  } catch (error) {
    deps.log.warn({ err: error, jobArn }, 'stopping the batch job failed; the driver stops it at its next poll');
    return false;
  }
}
