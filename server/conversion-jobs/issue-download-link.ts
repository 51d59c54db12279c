import { DomainError } from '../errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { requireFile } from './conversion-jobs.queries.ts';
import { downloadLinks } from './download-token.ts';

/**
 * Fresh 24-hour links for a finished file (the zip, and its accessible HTML
 * to open in a tab), so a page listing old files can offer them without
 * replaying the progress stream. CONFLICT while the file has nothing to
 * download yet.
 */
export async function issueDownloadLink(
  deps: Pick<ConversionDeps, 'db' | 'config' | 'clock'>,
  input: { fileId: string },
): Promise<{ url: string; htmlUrl: string }> {
  const file = await requireFile(deps.db, input.fileId);
  if (file.status !== 'completed') throw new DomainError('CONFLICT', 'The file has no finished conversion to download');
  const secret = resolveSigningSecrets(deps.config).download;
  const now = deps.clock.now();
  const { downloadUrl: url, htmlUrl } = downloadLinks(secret, file.id, now);
  return { url, htmlUrl };
}
