import type { UploadedFile } from '../server/files/uploaded-file.ts';
import { errorFromBody, fetchOrThrow, FolioError, toFolioError } from './errors.ts';
import { apiUrl, authHeaders, type FolioClientOptions } from './options.ts';

export type { UploadedFile };

/** Bytes of the request body sent so far, out of `total` (the file plus a few hundred bytes of multipart framing). */
export type UploadProgress = { loaded: number; total: number };

export type UploadOptions = {
  /** the file name Folio keeps; default the File's own name, else "document.pdf" */
  name?: string;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
};

/**
 * POST /api/files with the file in the multipart field `file`. In a browser
 * it goes through XMLHttpRequest, the one API that reports upload progress;
 * elsewhere (Node, or a custom fetch) the body is streamed and counted as it
 * is read. Answers the stored file (id, pages, status) or throws FolioError.
 */
export async function uploadFile(options: FolioClientOptions, file: Blob, init: UploadOptions = {}): Promise<UploadedFile> {
  const name = init.name ?? (typeof File !== 'undefined' && file instanceof File && file.name ? file.name : 'document.pdf');
  const url = apiUrl(options, '/api/files');
  const headers = await authHeaders(options);
  if (!options.fetch && typeof XMLHttpRequest !== 'undefined') return uploadWithXhr(url, headers, file, name, init);
  return uploadWithFetch(options.fetch ?? fetch, url, headers, file, name, init);
}

function uploadWithXhr(url: string, headers: Record<string, string>, file: Blob, name: string, init: UploadOptions): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    for (const [key, value] of Object.entries(headers)) xhr.setRequestHeader(key, value);
    xhr.upload.onprogress = (event) => init.onProgress?.({ loaded: event.loaded, total: event.total || file.size });
    xhr.onload = () => {
      if (xhr.status === 201) {
        try {
          resolve(JSON.parse(xhr.responseText) as UploadedFile);
        } catch (error) {
          reject(toFolioError(error));
        }
      } else reject(errorFromBody(xhr.status, xhr.responseText, xhr.getResponseHeader('retry-after')));
    };
    xhr.onerror = () => reject(new FolioError('NETWORK_ERROR', 'The upload could not reach Folio'));
    xhr.onabort = () => reject(new FolioError('ABORTED', 'The upload was cancelled'));
    if (init.signal?.aborted) return reject(new FolioError('ABORTED', 'The upload was cancelled'));
    init.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    const form = new FormData();
    form.append('file', file, name);
    xhr.send(form);
  });
}

async function uploadWithFetch(
  doFetch: typeof fetch,
  url: string,
  headers: Record<string, string>,
  file: Blob,
  name: string,
  init: UploadOptions,
): Promise<UploadedFile> {
  const boundary = `----folio-${crypto.randomUUID()}`;
  const encoder = new TextEncoder();
  const safeName = name.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
  const head = encoder.encode(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${safeName}"\r\ncontent-type: ${file.type || 'application/octet-stream'}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const total = head.length + file.size + tail.length;
  let loaded = 0;
  const reader = file.stream().getReader();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
      loaded += head.length;
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      const part = done ? tail : value;
      controller.enqueue(part);
      loaded += part.length;
      init.onProgress?.({ loaded, total });
      if (done) controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const response = await fetchOrThrow(
    doFetch,
    url,
    {
      method: 'POST',
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      signal: init.signal,
      duplex: 'half',
    } as RequestInit,
    (answer) => answer.status === 201,
  );
  return (await response.json()) as UploadedFile;
}
