import { fetchOrThrow, FolioError, toFolioError } from './errors.ts';
import { absoluteUrl, apiUrl, authHeaders, type FolioClientOptions } from './options.ts';

type Counts = { fileId: string; jobId: string | null; chunksDone: number; totalChunks: number; pagesDone: number; totalPages: number };

/** The events of GET /api/convert/:fileId/stream; `progress` repeats, the other three end the stream. */
export type ConversionEvent =
  | (Counts & { type: 'progress'; status: string; phase: string })
  /** the zip (downloadUrl) and its accessible HTML to open in a tab (htmlUrl): absolute (resolved against baseUrl), valid 24 hours */
  | (Counts & { type: 'completed'; downloadUrl: string; htmlUrl: string })
  | (Counts & { type: 'failed'; code: string; message: string })
  | (Partial<Counts> & { type: 'cancelled'; fileId: string; reason?: string });

export type ConversionEventType = ConversionEvent['type'];

const EVENT_TYPES = new Set<string>(['progress', 'completed', 'failed', 'cancelled']);

/**
 * The conversion's live state as an async iterator: the current state first,
 * then each change, ending after the terminal event (completed, failed or
 * cancelled). It reads the stream with fetch rather than EventSource because
 * the stream needs the Bearer header. A stream that closes before a terminal
 * event throws FolioError NETWORK_ERROR; subscribing again is safe, as the
 * first event is always the current state.
 *
 *   for await (const event of watchConversion(options, fileId)) if (event.type === 'progress') show(event.phase);
 */
export async function* watchConversion(
  options: FolioClientOptions,
  fileId: string,
  init: { signal?: AbortSignal } = {},
): AsyncGenerator<ConversionEvent, void, undefined> {
  const response = await fetchOrThrow(
    options.fetch ?? fetch,
    apiUrl(options, `/api/convert/${encodeURIComponent(fileId)}/stream`),
    { headers: { accept: 'text/event-stream', ...(await authHeaders(options)) }, signal: init.signal },
    (answer) => answer.ok && answer.body !== null,
  );
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<string>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw toFolioError(error);
      }
      if (chunk.done) throw new FolioError('NETWORK_ERROR', 'The progress stream closed before the conversion ended');
      buffer += chunk.value.replace(/\r\n?/g, '\n');
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const event = parseBlock(buffer.slice(0, end), options);
        buffer = buffer.slice(end + 2);
        if (event) {
          yield event;
          if (event.type !== 'progress') return;
        }
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** One SSE block: `event:` and `data:` lines; comments (keepalives) and unknown events are skipped. */
function parseBlock(block: string, options: FolioClientOptions): ConversionEvent | undefined {
  let type = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (!EVENT_TYPES.has(type) || data.length === 0) return undefined;
  const payload = JSON.parse(data.join('\n')) as Record<string, unknown>;
  const event = { ...payload, type } as ConversionEvent;
  if (event.type === 'completed') {
    event.downloadUrl = absoluteUrl(options, event.downloadUrl);
    event.htmlUrl = absoluteUrl(options, event.htmlUrl);
  }
  return event;
}
