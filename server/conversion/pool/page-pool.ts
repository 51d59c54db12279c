import { Worker } from 'node:worker_threads';
import { DomainError, type ErrorCode } from '../../errors.ts';
import type { AuditInput, AuditResult } from '../audit/audit-html.ts';
import type { PageResult } from '../model.ts';
import type { DocumentFacts, DocxBlocks, FromWorker, LocalJobOptions, ToWorker, WorkerError } from './protocol.ts';

/**
 * A pool of worker threads converting pages with the local backend. Pages
 * are independent, so any worker takes the next one; results are handed to
 * `onPage` strictly in the order asked, whichever worker finished first. At
 * most WINDOW_PER_WORKER × size pages run ahead of the next one owed, so a
 * slow page (OCR) cannot make finished results pile up in memory. Runs going on
 * at once share the workers evenly (re-decided between chunks), and a run's
 * chunk goes to an idle worker that already has its document open if one does.
 */

const WINDOW_PER_WORKER = 4;
/** Most consecutive pages a lane claims at once; the window grows to fit, so finished results still stay few. */
const MAX_CHUNK = 16;
/** Documents a worker keeps parsed: the chunk being converted and one more (two jobs interleaving). */
const OPEN_PER_WORKER = 2;
/**
 * A worker's V8 old space: a ceiling against a runaway page, not a budget. Close to the limit
 * V8 collects hard and often: at 256 MB, pages of the 117-page corpus book converted 14% slower
 * (55 against 48 ms/page in one worker) for no lower peak (1,000-page run: 370 MB either way).
 * Page images are native memory (canvas), outside this limit.
 */
const WORKER_HEAP_MB = 1024;
/**
 * A worker's memory outside that heap: decoded images are ArrayBuffers, which resourceLimits does not
 * count. One image is capped (MAX_IMAGE_PIXELS, at most about 350 MB as pdf.js's RGB plus our RGBA
 * copy), but a page may paint any number of them, each under the cap: ten 49-megapixel images on one
 * 1.4 MB page took the process to 3.5 GB. A worker past this is terminated (its page comes out empty
 * with the reason, the run goes on with a fresh worker); nothing else in the process is touched.
 */
const WORKER_EXTERNAL_MB = 640;
/** How often a busy worker's memory is read: an interrupt, served even mid-decode; an image decodes in about a second. */
const MEMORY_WATCH_MS = 100;

type PoolRun = {
  pdf: Uint8Array;
  /** identifies the document's bytes (a hash): workers keep it open between runs, so chunk after chunk is parsed once */
  key: string;
  pages: number[];
  options: LocalJobOptions;
  labels?: Map<number, string>;
  signal?: AbortSignal;
  onPage?: (result: PageResult) => void | Promise<void>;
};

export type PagePool = {
  run(job: PoolRun): Promise<PageResult[]>;
  /**
   * Audits HTML in a worker, after the runs already asked for: a document's audit then runs while
   * the engine's thread draws its tagged PDF, instead of after it, on workers that sit idle by then.
   */
  audit(input: AuditInput, options?: { releaseIdle?: boolean }): Promise<AuditResult>;
  /**
   * Loads jsdom and axe-core in a worker the coming audit will use: a worker the pool does not
   * need for pages when there is room for one (a short document converts on fewer workers than the
   * pool has), so on two cores the audit's imports overlap the page conversion instead of following it.
   */
  warmAudit(): void;
  /** Stops the warmed worker when it is idle: memory back for a long run, which starts workers afresh. */
  coolAudit(): void;
  /**
   * Opens the document in a worker and reads its metadata and page labels there, so the
   * engine's own thread never loads pdf.js; the worker keeps it open for the pages that follow.
   * Throws the DomainError the worker threw (NOT_A_PDF, PDF_ENCRYPTED, ...).
   */
  inspect(input: { pdf: Uint8Array; key: string; sourceName: string }): Promise<DocumentFacts>;
  /**
   * Reads a DOCX into blocks in a worker, in turn like an audit: mammoth's parse is long and memory-hungry
   * on a big document, and a worker's heap limit stops a runaway one without touching the caller's thread.
   * The worker is the DOCX's own, so aborting (a cancel) terminates it mid-parse and stops nothing else.
   */
  docx(docx: Uint8Array, options?: { signal?: AbortSignal }): Promise<DocxBlocks>;
  close(): Promise<void>;
  readonly size: number;
};

type RunShare = { held: number };

type Slot = {
  worker: Worker;
  busy: boolean;
  /** documents this worker has open, least recently used first */
  open: number[];
  task?: { docId: number; page: number; resolve: (message: FromWorker) => void; reject: (error: Error) => void };
  /** audits and inspections in flight, by request id */
  requests: Map<number, { resolve: (result: never) => void; reject: (error: Error) => void }>;
  dead: boolean;
  /** jsdom and axe-core are loaded or loading: audits go here first */
  warm?: boolean;
  /** set when the memory watch terminated it, so its exit names the reason */
  overMemory?: boolean;
};

export function createPagePool(options: { size: number; workerUrl?: URL; externalMb?: number }): PagePool {
  const size = Math.max(1, Math.floor(options.size));
  const externalMb = options.externalMb ?? WORKER_EXTERNAL_MB;
  const workerUrl = options.workerUrl ?? new URL('./worker-entry.js', import.meta.url);
  const slots: Slot[] = [];
  /** workers outside the pool, each kept by one DOCX read */
  const own = new Set<Slot>();
  let nextDocId = 1;
  let closed = false;
  const docIds = new Map<string, number>();
  /** the runs going on, each with the number of workers its lanes hold */
  const activeRuns = new Set<RunShare>();
  /** The most workers one run may hold: the pool split evenly between the runs going on, rounded up. */
  const fairShare = () => Math.ceil(size / Math.max(1, activeRuns.size));

  /** A worker with its listeners; `spawn` puts it in the pool, a DOCX keeps it to itself. */
  const startWorker = (): Slot => {
    const worker = new Worker(workerUrl, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 } });
    const slot: Slot = { worker, busy: false, open: [], requests: new Map(), dead: false };
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'closed') return;
      if (message.type === 'audit' || message.type === 'inspect' || message.type === 'docx') {
        const request = slot.requests.get(message.id);
        if (!request) return;
        slot.requests.delete(message.id);
        if (message.result) request.resolve(message.result as never);
        else request.reject(workerError(message.error, `${message.type} failed`));
        return;
      }
      const task = slot.task;
      if (!task || task.docId !== message.docId || task.page !== message.page) return;
      slot.task = undefined;
      task.resolve(message);
    });
    const fail = (error: Error) => {
      slot.dead = true;
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      const task = slot.task;
      slot.task = undefined;
      task?.reject(error);
      for (const request of slot.requests.values()) request.reject(error);
      slot.requests.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) =>
      fail(new Error(slot.overMemory ? `it used more than ${externalMb} MB outside its heap` : `page worker exited with code ${code}`)),
    );
    worker.unref();
    watchMemory();
    return slot;
  };

  let memoryWatch: NodeJS.Timeout | undefined;
  /** Reads each busy worker's memory outside its heap, and terminates one past externalMb. */
  const watchMemory = () => {
    if (memoryWatch) return;
    memoryWatch = setInterval(() => {
      for (const slot of [...slots, ...own]) {
        if (slot.dead || slot.overMemory || (!slot.task && slot.requests.size === 0)) continue;
        slot.worker.getHeapStatistics().then(
          (stats) => {
            if (slot.dead || slot.overMemory || stats.external_memory < externalMb * 1024 * 1024) return;
            slot.overMemory = true;
            void slot.worker.terminate();
          },
          () => undefined,
        );
      }
    }, MEMORY_WATCH_MS);
    memoryWatch.unref();
  };
  const spawn = (): Slot => {
    const slot = startWorker();
    slots.push(slot);
    return slot;
  };

  const retire = async (slot: Slot): Promise<void> => {
    slot.dead = true;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    slot.worker.removeAllListeners('exit');
    await slot.worker.terminate();
  };

  const docIdFor = (key: string): number => {
    let docId = docIds.get(key);
    if (docId === undefined) {
      docId = nextDocId++;
      docIds.set(key, docId);
      // forget old keys; a worker reopens a document it has closed
      if (docIds.size > 64) docIds.delete(docIds.keys().next().value!);
    }
    return docId;
  };

  let nextRequestId = 1;
  /** A request answered by id (audit, inspect); the worker is kept referenced until the answer comes. */
  const request = <T>(slot: Slot, message: (id: number) => ToWorker): Promise<T> => {
    const id = nextRequestId++;
    return new Promise<T>((resolve, reject) => {
      slot.requests.set(id, { resolve: resolve as (result: never) => void, reject });
      slot.worker.ref();
      slot.worker.postMessage(message(id));
    }).finally(() => {
      if (!slot.dead && slot.requests.size === 0 && !slot.task) slot.worker.unref();
    });
  };

  const ask = (slot: Slot, docId: number, page: number, label: string | undefined): Promise<FromWorker> =>
    new Promise((resolve, reject) => {
      slot.task = { docId, page, resolve, reject };
      slot.worker.ref();
      slot.worker.postMessage({ type: 'page', docId, page, label } satisfies ToWorker);
    }).finally(() => {
      if (!slot.dead && slot.requests.size === 0) slot.worker.unref();
    }) as Promise<FromWorker>;

  /** Sends the document to a worker once; a worker keeps at most OPEN_PER_WORKER documents open. */
  const openIn = (slot: Slot, docId: number, job: { pdf: Uint8Array; options?: LocalJobOptions }) => {
    const at = slot.open.indexOf(docId);
    if (at >= 0) {
      slot.open.splice(at, 1);
      slot.open.push(docId);
      return;
    }
    slot.worker.postMessage({ type: 'open', docId, pdf: job.pdf, options: job.options } satisfies ToWorker);
    slot.open.push(docId);
    while (slot.open.length > OPEN_PER_WORKER) slot.worker.postMessage({ type: 'close', docId: slot.open.shift()! } satisfies ToWorker);
  };

  const runOne = async (job: PoolRun): Promise<PageResult[]> => {
    if (closed) throw new Error('the conversion engine is closed');
    const id = docIdFor(job.key);
    const { pages, signal, onPage } = job;
    const results: PageResult[] = [];
    const finished = new Map<number, PageResult>();
    let nextToStart = 0;
    let nextToEmit = 0;
    let stopError: unknown;

    const emitReady = async () => {
      while (finished.has(nextToEmit)) {
        const result = finished.get(nextToEmit)!;
        finished.delete(nextToEmit);
        nextToEmit++;
        results.push(result);
        if (onPage && stopError === undefined) {
          try {
            await onPage(result);
          } catch (error) {
            stopError ??= error;
          }
        }
      }
    };

    let emitting: Promise<void> = Promise.resolve();
    // A lane takes a run of consecutive pages, not every other one: running-head detection reads the
    // text of the pages two either side, and a worker converting those pages itself reuses that read.
    const chunk = Math.max(1, Math.min(MAX_CHUNK, Math.ceil(pages.length / size)));
    const runAhead = size * Math.max(WINDOW_PER_WORKER, chunk);
    /** claimed pages a lane left unstarted (its worker died): the next lane takes them first */
    const leftOver: number[] = [];
    const claimable = () => leftOver.length > 0 || (nextToStart < pages.length && nextToStart < nextToEmit + runAhead);
    const share: RunShare = { held: 0 };
    const lane = async (slot: Slot) => {
      // this lane's claimed run: pages[next..end) are still to do
      let next = 0;
      let end = 0;
      try {
        while (stopError === undefined && !signal?.aborted) {
          let index: number;
          if (next < end) index = next++;
          // between chunks a run holding more than its share hands the worker back, so a document
          // started after a long one gets a worker now rather than when the long one has run out of pages
          else if (share.held > fairShare()) return;
          else if (leftOver.length > 0) index = leftOver.shift()!;
          else if (claimable()) {
            index = nextToStart;
            next = index + 1;
            end = Math.min(pages.length, index + chunk);
            nextToStart = end;
          } else return;
          const page = pages[index]!;
          openIn(slot, id, job);
          let message: FromWorker;
          try {
            message = await ask(slot, id, page, job.labels?.get(page));
          } catch (error) {
            // the worker died on this page (out of memory on a huge image, a native crash): the page comes out
            // empty with the reason, the lane ends, and the run carries on with a fresh worker
            finished.set(index, failedPage(page, job.labels?.get(page), `the page worker stopped: ${(error as Error).message}`));
            emitting = emitting.then(emitReady);
            await emitting;
            return;
          }
          let result: PageResult;
          if (message.type === 'page') result = message.result;
          else if (message.type === 'error') result = failedPage(page, job.labels?.get(page), message.error.message);
          else continue;
          finished.set(index, result);
          emitting = emitting.then(emitReady);
          await emitting;
        }
      } finally {
        // pages claimed but never asked for go back, or the run would wait for them forever
        for (let index = next; index < end; index++) leftOver.push(index);
        // counted down here, not when the worker is released: another lane of this run at its own chunk
        // boundary in the same turn must see this one gone, or both would hand their workers back
        share.held--;
      }
    };

    const want = Math.min(size, pages.length);
    const lanes = new Set<Promise<void>>();
    const startLanes = () => {
      const limit = Math.min(want, fairShare());
      const free = () => slots.filter((candidate) => !candidate.busy && !candidate.dead);
      while (free().length < limit - share.held && slots.length < size) spawn();
      // a worker that has this document open first: another would parse it again, and keep it open beside its own
      const hasItOpen = (slot: Slot) => (slot.open.includes(id) ? 0 : 1);
      for (const slot of free().sort((a, b) => hasItOpen(a) - hasItOpen(b))) {
        if (share.held >= limit || !claimable()) return;
        slot.busy = true;
        share.held++;
        const running: Promise<void> = lane(slot)
          .catch((error: unknown) => {
            stopError ??= error;
          })
          .finally(() => {
            lanes.delete(running);
            release(slot);
          });
        lanes.add(running);
      }
    };
    activeRuns.add(share);
    try {
      // Lanes pull pages on whichever workers no other run holds, up to this run's fair share; the run wakes
      // whenever a worker comes free (its own lane ended, another run's did, a run finished) and takes more.
      for (;;) {
        if (closed) throw new Error('the conversion engine is closed');
        const stopping = stopError !== undefined || signal?.aborted;
        if (!stopping) startLanes();
        if (lanes.size === 0 && (stopping || !(nextToStart < pages.length || leftOver.length > 0))) break;
        await slotFreed();
      }
      await emitting;
      if (stopError !== undefined) throw stopError;
      signal?.throwIfAborted();
      return results;
    } finally {
      activeRuns.delete(share);
      // the runs still going may now hold more workers each
      wakeWaiting();
    }
  };

  /** Runs waiting for a worker another run holds. */
  let freedWaiters: (() => void)[] = [];
  const slotFreed = () => new Promise<void>((resolve) => freedWaiters.push(resolve));
  const wakeWaiting = () => {
    const waiting = freedWaiters;
    freedWaiters = [];
    for (const wake of waiting) wake();
  };
  const release = (slot: Slot) => {
    slot.busy = false;
    wakeWaiting();
  };
  let turn: Promise<unknown> = Promise.resolve();
  const anySlot = () => slots.find((candidate) => !candidate.dead) ?? spawn();
  const auditOne = (input: AuditInput, releaseIdle: boolean): Promise<AuditResult> => {
    if (closed) throw new Error('the conversion engine is closed');
    const slot = slots.find((candidate) => candidate.warm && !candidate.dead) ?? anySlot();
    // A long document's audit loads jsdom beside pdf.js while the engine's thread draws the PDF: the
    // other page workers, idle until the next run, are stopped so memory
    // stays bounded, and the next run starts them again (a fraction of a second, against a long document).
    if (releaseIdle) {
      for (const other of slots.filter((candidate) => candidate !== slot && !candidate.busy && !candidate.task && candidate.requests.size === 0))
        void retire(other).catch(() => undefined);
    }
    return request<AuditResult>(slot, (id) => ({ type: 'audit', id, input }));
  };
  /** Audits and DOCX reads are long and memory-hungry: one at a time, between the pages of whatever runs. */
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const mine = turn.then(work);
    turn = mine.catch(() => undefined);
    return mine;
  };
  return {
    size,
    run: runOne,
    async inspect({ pdf, key, sourceName }) {
      if (closed) throw new Error('the conversion engine is closed');
      const docId = docIdFor(key);
      // not in turn: a worker answers between two pages of whatever run it is in, and the run goes on; an idle
      // worker answers at once, and the pages that follow go where the document is open. Not the warmed worker:
      // the inspection would wait behind jsdom's load there, and the audit's worker would hold the document open.
      const idle = (candidate: Slot) => !candidate.dead && !candidate.busy && !candidate.task && candidate.requests.size === 0 && !candidate.warm;
      const slot = slots.find((candidate) => !candidate.dead && candidate.open.includes(docId)) ?? slots.find(idle) ?? anySlot();
      openIn(slot, docId, { pdf });
      try {
        return await request<DocumentFacts>(slot, (id) => ({ type: 'inspect', id, docId, sourceName }));
      } catch (error) {
        // reading it killed the worker (out of memory): for the caller, a file that cannot be read
        if (slot.dead) throw new DomainError('PDF_MALFORMED', 'The PDF could not be read within the memory limit.', { cause: error });
        // a document that cannot be opened is not kept open
        const at = slot.open.indexOf(docId);
        if (at >= 0) {
          slot.open.splice(at, 1);
          slot.worker.postMessage({ type: 'close', docId } satisfies ToWorker);
        }
        throw error;
      }
    },
    audit: (input, options = {}) => inTurn(() => auditOne(input, options.releaseIdle ?? false)),
    warmAudit() {
      if (closed || slots.some((slot) => slot.warm && !slot.dead)) return;
      const slot = slots.length < size ? spawn() : slots.find((candidate) => !candidate.busy && !candidate.task);
      if (!slot) return;
      slot.warm = true;
      slot.worker.postMessage({ type: 'warm' } satisfies ToWorker);
    },
    coolAudit() {
      for (const slot of slots.filter((candidate) => candidate.warm && !candidate.busy && !candidate.task && candidate.requests.size === 0))
        void retire(slot).catch(() => undefined);
    },
    docx: (docx, { signal } = {}) =>
      inTurn(async () => {
        if (closed) throw new Error('the conversion engine is closed');
        signal?.throwIfAborted();
        // Not a pool worker: terminating one would also end the inspections other files queued on it.
        // A fresh worker costs a fraction of a second against a DOCX's seconds, and takes mammoth's memory with it.
        const slot = startWorker();
        own.add(slot);
        const stop = () => {
          for (const pending of slot.requests.values()) pending.reject(signal!.reason);
          slot.requests.clear();
        };
        signal?.addEventListener('abort', stop, { once: true });
        try {
          return await request<DocxBlocks>(slot, (id) => ({ type: 'docx', id, docx }));
        } finally {
          signal?.removeEventListener('abort', stop);
          own.delete(slot);
          await retire(slot).catch(() => undefined);
        }
      }),
    async close() {
      closed = true;
      // a run waiting for a worker learns the pool is closed
      wakeWaiting();
      clearInterval(memoryWatch);
      await Promise.all([...slots, ...own].map(retire));
    },
  };
}

/** A worker's error as thrown there: a DomainError keeps its code across the thread boundary. */
function workerError(error: WorkerError | undefined, fallback: string): Error {
  if (error?.code && error.name === 'DomainError') return new DomainError(error.code as ErrorCode, error.message);
  return Object.assign(new Error(error?.message ?? fallback), { name: error?.name ?? 'Error' });
}

/** A page the worker could not convert still comes out, empty, with the reason, so one bad page does not sink a document. */
function failedPage(page: number, label: string | undefined, message: string): PageResult {
  return {
    page,
    label: label ?? String(page),
    backend: 'local',
    classification: 'complex',
    reasons: ['low-coverage'],
    blocks: [],
    warnings: [`page ${page} could not be converted (${message}); it is left empty`],
    textLayerWords: 0,
    ocr: false,
    timings: { ms: 0 },
    costUsd: 0,
  };
}
