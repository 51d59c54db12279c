import type { Deps } from '../deps.ts';

/** What the conversion service's functions take first. */
export type ConversionDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'clock' | 'log' | 'store' | 'engine'>;

/** Where a job keeps its objects: chunk results and the zip, under the file so deleting the file removes them. */
export function jobObjectKey(fileId: string, jobId: string, name: string) {
  return `files/${fileId}/jobs/${jobId}/${name}`;
}

/** A job asked for HTML only (`outputs: ['html']`): its renders skip the tagged PDF. */
export function withoutTaggedPdf(options: Record<string, unknown>): boolean {
  return Array.isArray(options.outputs) && !options.outputs.includes('pdf');
}

/** The backend a job's options choose (chunks run on it; webhooks report it as data.backend). */
export function backendFor(options: Record<string, unknown>) {
  if (options.parser === 'vision' || options.highFidelity === true) return 'chunked-vision';
  return options.parser === 'parser' ? 'parser' : 'local';
}
