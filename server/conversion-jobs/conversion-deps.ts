import type { Deps } from '../deps.ts';

/** What the conversion service's functions take first. */
export type ConversionDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'clock' | 'log' | 'store' | 'engine'>;

/** Where a job keeps its objects: chunk results and the zip, under the file so deleting the file removes them. */
export function jobObjectKey(fileId: string, jobId: string, name: string) {
  return `files/${fileId}/jobs/${jobId}/${name}`;
}
