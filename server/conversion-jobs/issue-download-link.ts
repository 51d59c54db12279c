import { DomainError } from '../errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { requireFile } from './conversion-jobs.queries.ts';
import { downloadUrl } from './download-token.ts';

/**
 * A fresh 24-hour zip link for a finished file, so a page listing old files
 * can offer downloads without replaying the progress stream. CONFLICT while
 * the file has nothing to download yet.
 */
export async function issueDownloadLink(deps: Pick<ConversionDeps, 'db' | 'config' | 'clock'>, input: { fileId: string }): Promise<{ url: string }> {
  const file = await requireFile(deps.db, input.fileId);
  if (file.status !== 'completed') throw new DomainError('CONFLICT', 'The file has no finished conversion to download');
  return { url: downloadUrl(resolveSigningSecrets(deps.config).download, file.id, deps.clock.now()) };
}
