import { useEffect, useRef, useState } from 'preact/hooks';
import { type ConversionEvent, type UploadedFile, uploadFile, watchConversion } from '../../../client-sdk/index.ts';
import { folio, messageOf, sdkOptions } from '../api.ts';
import type { BatchLane, FileItem, Me } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

/** One credit per page (the specification's HIGH_FIDELITY_CREDIT_MULTIPLIER is 1). */
const creditsFor = (pages: number | null) => pages ?? 0;
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
const LIST_REFRESH_MS = 5_000;
const HTML_LINKS_SHOWN = 50;
const LIVE = new Set(['pending', 'processing', 'assembling', 'waiting_batch', 'paused_budget', 'queued']);

/** How the batch lane applies to a high-fidelity start of this many pages: off, the user's choice, or by itself. */
function laneChoice(lane: BatchLane | null, pages: number | null): 'off' | 'optional' | 'automatic' {
  if (!lane?.enabled) return 'off';
  return (pages ?? 0) >= lane.minPages ? 'automatic' : 'optional';
}

type Run = { fileId: string; name: string; event: ConversionEvent | null; startedAt: number; rate: number | null; error: string };

export function ConvertPage(props: { me: Me; onBalanceChange: () => void }) {
  const [uploaded, setUploaded] = useState<UploadedFile | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [highFidelity, setHighFidelity] = useState(false);
  const [lane, setLane] = useState<BatchLane | null>(null);
  const [batchOptIn, setBatchOptIn] = useState(false);
  const [htmlLinks, setHtmlLinks] = useState<Record<string, string>>({});
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [run, setRun] = useState<Run | null>(null);
  const [files, setFiles] = useState<FileItem[]>([]);
  const watching = useRef<AbortController | null>(null);

  const refresh = async () => {
    try {
      setFiles((await folio.files.list.query()).files);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  // An HTML link per finished file, asked once (links last 24 hours): a real link can open in a new tab, a button after a fetch would be
  // blocked. Only the newest finished files get one, so a long list is not hundreds of calls.
  useEffect(() => {
    const missing = files
      .filter((file) => file.status === 'completed')
      .slice(0, HTML_LINKS_SHOWN)
      .filter((file) => !htmlLinks[file.id]);
    if (missing.length === 0) return;
    void Promise.all(
      missing.map((file) =>
        folio.conversion.downloadLink.query({ fileId: file.id }).then(
          (link) => [file.id, link.htmlUrl] as const,
          () => undefined,
        ),
      ),
    ).then((found) => setHtmlLinks((current) => ({ ...current, ...Object.fromEntries(found.filter((entry) => entry !== undefined)) })));
  }, [files]);
  useEffect(() => {
    void refresh();
    folio.conversion.batchLane.query().then(setLane, (caught: unknown) => setError(messageOf(caught)));
    const timer = setInterval(() => void refresh(), LIST_REFRESH_MS);
    return () => {
      clearInterval(timer);
      watching.current?.abort();
    };
  }, []);

  const upload = async (file: File | undefined) => {
    if (!file) return;
    setError('');
    setUploaded(null);
    setProgress(0);
    try {
      const stored = await uploadFile(sdkOptions, file, { onProgress: ({ loaded, total }) => setProgress(Math.round((loaded / total) * 100)) });
      setUploaded(stored);
      void refresh();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setProgress(null);
    }
  };

  const watch = async (fileId: string, name: string) => {
    watching.current?.abort();
    const controller = new AbortController();
    watching.current = controller;
    const startedAt = Date.now();
    setRun({ fileId, name, event: null, startedAt, rate: null, error: '' });
    try {
      for await (const event of watchConversion(sdkOptions, fileId, { signal: controller.signal })) {
        const minutes = (Date.now() - startedAt) / 60_000;
        setRun((current) =>
          current?.fileId === fileId
            ? { ...current, event, rate: event.type === 'progress' && event.pagesDone > 0 && minutes > 0 ? event.pagesDone / minutes : current.rate }
            : current,
        );
        if (event.type !== 'progress') {
          void refresh();
          props.onBalanceChange();
        }
      }
    } catch (caught) {
      if (!controller.signal.aborted) setRun((current) => (current?.fileId === fileId ? { ...current, error: messageOf(caught) } : current));
    }
  };

  const start = async () => {
    if (!uploaded) return;
    setBusy(true);
    setError('');
    try {
      const optedIn = highFidelity && laneChoice(lane, uploaded.pages) === 'optional' && batchOptIn;
      await folio.conversion.start.mutate({ fileId: uploaded.id, highFidelity, ...(optedIn ? { _batchLane: true } : {}) });
      void watch(uploaded.id, uploaded.name);
      setUploaded(null);
      void refresh();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  const act = async (action: () => Promise<unknown>) => {
    setError('');
    try {
      await action();
      void refresh();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  const download = (fileId: string) =>
    act(async () => {
      const link = await folio.conversion.downloadLink.query({ fileId });
      location.assign(link.url);
    });

  const balance = props.me.balance;
  const available = balance.planType === 'paid' ? `${balance.creditsRemaining - balance.creditsHeld} credits` : `${balance.freePagesLeft} free pages`;

  return (
    <>
      <h1>Convert a PDF</h1>
      <section aria-labelledby="upload-heading">
        <h2 id="upload-heading">1. Choose a file</h2>
        <label
          class={dragging ? 'drop over' : 'drop'}
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault();
            setDragging(false);
            void upload(event.dataTransfer?.files[0]);
          }}
        >
          Drop a PDF here, or pick one:{' '}
          <input type="file" name="file" accept="application/pdf,.pdf" onChange={(event) => void upload(event.currentTarget.files?.[0])} />
        </label>
        {progress !== null && (
          <p>
            <label for="upload-progress">Uploading</label>
            <progress id="upload-progress" max={100} value={progress}>
              {progress}%
            </progress>
          </p>
        )}
      </section>

      {uploaded && (
        <section aria-labelledby="start-heading">
          <h2 id="start-heading">2. Start the conversion</h2>
          <p id="estimate">
            <strong>{uploaded.name}</strong>: {plural(uploaded.pages ?? 0, 'page')}, costs {plural(creditsFor(uploaded.pages), 'credit')}. You have {available}.
          </p>
          <fieldset>
            <legend>Fidelity</legend>
            <label>
              <input type="radio" name="fidelity" checked={!highFidelity} onChange={() => setHighFidelity(false)} /> Local
            </label>
            <label>
              <input type="radio" name="fidelity" checked={highFidelity} onChange={() => setHighFidelity(true)} /> High fidelity
            </label>
          </fieldset>
          {highFidelity && laneChoice(lane, uploaded.pages) === 'optional' && lane && (
            <p>
              <label>
                <input type="checkbox" checked={batchOptIn} onChange={(event) => setBatchOptIn(event.currentTarget.checked)} /> Use the batch lane: the pages
                wait for an overnight batch run (at most {lane.timeoutHours} hours) instead of converting now. You can still choose “Process now” while it
                waits.
              </label>
            </p>
          )}
          {highFidelity && laneChoice(lane, uploaded.pages) === 'automatic' && lane && (
            <p class="notice">
              A high-fidelity conversion of {lane.minPages} pages or more goes to the batch lane: it waits for a batch run (at most {lane.timeoutHours} hours).
              Choose “Process now” while it waits to convert at once.
            </p>
          )}
          <button class="primary" type="button" disabled={busy} onClick={() => void start()}>
            Start conversion
          </button>
        </section>
      )}

      <ErrorAlert error={error} />

      {run && (
        <RunPanel
          run={run}
          onCancel={() => act(() => folio.conversion.cancel.mutate({ fileId: run.fileId }))}
          onProcessNow={() => act(() => folio.conversion.processNow.mutate({ fileId: run.fileId }))}
        />
      )}

      <section aria-labelledby="files-heading">
        <h2 id="files-heading">Your files</h2>
        {files.length === 0 ? (
          <p>No files yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Pages</th>
                <th scope="col">Cost (credits)</th>
                <th scope="col">Waiting for batch</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {files.map((file) => (
                <tr key={file.id}>
                  <td>{file.name}</td>
                  <td>
                    {file.status}
                    {file.batchWaiting ? ': Waiting for the batch lane' : file.phase && LIVE.has(file.status) ? `: ${file.phase}` : ''}
                    {file.errorMessage ? ` (${file.errorMessage})` : ''}
                  </td>
                  <td>{file.pages ?? '—'}</td>
                  <td>{file.contentType === 'application/pdf' ? creditsFor(file.pages) : '—'}</td>
                  <td>{file.batchWaiting ? 'Yes' : 'No'}</td>
                  <td class="actions">
                    {file.status === 'completed' && (
                      <button type="button" onClick={() => void download(file.id)}>
                        Download <span class="visually-hidden">{file.name}</span>
                      </button>
                    )}
                    {file.status === 'completed' && htmlLinks[file.id] && (
                      <a href={htmlLinks[file.id]} target="_blank" rel="noopener">
                        Open the HTML <span class="visually-hidden">of {file.name}</span> (new tab)
                      </a>
                    )}
                    {file.status === 'completed' && file.contentType === 'application/pdf' && (
                      <a href={`#/figures/${file.id}`}>
                        Describe figures <span class="visually-hidden">of {file.name}</span>
                      </a>
                    )}
                    {LIVE.has(file.status) && run?.fileId !== file.id && (
                      <button type="button" onClick={() => void watch(file.id, file.name)}>
                        Watch progress
                      </button>
                    )}
                    {file.batchWaiting && (
                      <button type="button" onClick={() => void act(() => folio.conversion.processNow.mutate({ fileId: file.id }))}>
                        Process now
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function RunPanel(props: { run: Run; onCancel: () => void; onProcessNow: () => void }) {
  const { run } = props;
  const heading = useRef<HTMLHeadingElement>(null);
  // The start button is gone once a run begins: focus moves to the run, so a keyboard user goes on from there.
  useEffect(() => heading.current?.focus(), [run.fileId, run.startedAt]);
  const event = run.event;
  const zipName = `${run.name.replace(/\.[^.]+$/, '') || 'document'}.zip`;
  return (
    <section aria-labelledby="run-heading">
      <h2 id="run-heading" ref={heading} tabIndex={-1}>
        Converting {run.name}
      </h2>
      {!event ? (
        <p role="status">Connecting…</p>
      ) : event.type === 'progress' ? (
        <>
          <p role="status">
            {event.phase}. {event.pagesDone} of {plural(event.totalPages, 'page')}, {event.chunksDone} of {plural(event.totalChunks, 'chunk')}
            {run.rate ? `, ${run.rate.toFixed(1)} pages per minute` : ''}.
          </p>
          <label for="conversion-progress" class="visually-hidden">
            Conversion progress
          </label>
          <progress id="conversion-progress" max={event.totalPages || 1} value={event.pagesDone} />
          <div class="actions">
            <button type="button" onClick={props.onCancel}>
              Cancel conversion
            </button>
            {event.status === 'waiting_batch' && (
              <button type="button" onClick={props.onProcessNow}>
                Process now
              </button>
            )}
          </div>
        </>
      ) : event.type === 'completed' ? (
        <p role="status">
          Finished: {plural(event.totalPages, 'page')}. <a href={event.downloadUrl}>Download {zipName}</a> or{' '}
          <a href={event.htmlUrl} target="_blank" rel="noopener">
            open the accessible HTML (new tab)
          </a>
          ; the links work for 24 hours.
        </p>
      ) : event.type === 'failed' ? (
        <p role="alert" class="error">
          The conversion failed: {event.message}. Nothing was charged.
        </p>
      ) : (
        <p role="status">Cancelled. Nothing was charged and the file is ready to convert again.</p>
      )}
      {run.error && (
        <p role="alert" class="error">
          {run.error}
        </p>
      )}
    </section>
  );
}
