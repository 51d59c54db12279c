import { useEffect, useRef, useState } from 'preact/hooks';
import { type BenchmarkResult, type BenchmarkSession, watchBenchmark } from '../../../client-sdk/index.ts';
import { folio, messageOf } from '../api.ts';
import type { FileItem } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

const BACKENDS = ['local', 'chunked-vision', 'parser'] as const;
type Pipeline = { backend: (typeof BACKENDS)[number]; uxOptimizer: boolean };
const CHOICES: Pipeline[] = BACKENDS.flatMap((backend) => [
  { backend, uxOptimizer: false },
  { backend, uxOptimizer: true },
]);
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
const nameOf = (pipeline: Pipeline) => `${pipeline.backend}${pipeline.uxOptimizer ? ' + UX optimizer' : ''}`;
const keyOf = (pipeline: Pipeline) => `${pipeline.backend}:${pipeline.uxOptimizer}`;

/** Runs one uploaded PDF through up to six pipelines and shows their results side by side as the session runs. */
export function BenchmarkPage(props: { onBalanceChange: () => void }) {
  const [files, setFiles] = useState<FileItem[] | null>(null);
  const [fileId, setFileId] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set([keyOf(CHOICES[0]!)]));
  const [session, setSession] = useState<BenchmarkSession | null>(null);
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState('');
  const watching = useRef<AbortController | null>(null);

  useEffect(() => {
    folio.files.list.query().then(
      (result) => {
        const pdfs = result.files.filter((file) => file.contentType === 'application/pdf' && file.pages);
        setFiles(pdfs);
        setFileId((current) => current || pdfs[0]?.id || '');
      },
      (caught: unknown) => setError(messageOf(caught)),
    );
    return () => watching.current?.abort();
  }, []);

  const watch = async (sessionId: string) => {
    watching.current?.abort();
    const controller = new AbortController();
    watching.current = controller;
    try {
      for await (const next of watchBenchmark(folio, sessionId, { signal: controller.signal })) setSession(next);
      props.onBalanceChange();
    } catch (caught) {
      if (!controller.signal.aborted) setError(messageOf(caught));
    }
  };

  const start = async (event: Event) => {
    event.preventDefault();
    setError('');
    setStarting(true);
    try {
      const pipelines = CHOICES.filter((pipeline) => chosen.has(keyOf(pipeline)));
      const started = await folio.benchmark.start.mutate({ fileId, pipelines });
      setSession(null);
      void watch(started.sessionId);
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setStarting(false);
    }
  };

  const file = files?.find((entry) => entry.id === fileId);
  const toggle = (key: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(key);
    else next.delete(key);
    setChosen(next);
  };

  return (
    <>
      <h1>Benchmark</h1>
      <p>Convert one uploaded PDF with several pipelines and compare time, accessibility, word recall and cost side by side.</p>
      {files && files.length === 0 && (
        <p>
          Upload a PDF on the <a href="#/convert">Convert</a> page first.
        </p>
      )}
      {files && files.length > 0 && (
        <form onSubmit={(event) => void start(event)}>
          <div class="field">
            <label for="benchmark-file">File</label>
            <select id="benchmark-file" value={fileId} onChange={(event) => setFileId(event.currentTarget.value)}>
              {files.map((entry) => (
                <option key={entry.id} value={entry.id}>
                  {entry.name} ({entry.pages} {entry.pages === 1 ? 'page' : 'pages'})
                </option>
              ))}
            </select>
          </div>
          <fieldset>
            <legend>Pipelines to compare</legend>
            {CHOICES.map((pipeline) => (
              <label key={keyOf(pipeline)}>
                <input type="checkbox" checked={chosen.has(keyOf(pipeline))} onChange={(event) => toggle(keyOf(pipeline), event.currentTarget.checked)} />{' '}
                {nameOf(pipeline)}
              </label>
            ))}
          </fieldset>
          <p id="benchmark-cost">
            Costs {plural((file?.pages ?? 0) * chosen.size, 'credit')} ({plural(file?.pages ?? 0, 'page')} × {plural(chosen.size, 'pipeline')}), held until the
            session ends.
          </p>
          <button class="primary" type="submit" disabled={starting || chosen.size === 0 || !fileId}>
            Start the comparison
          </button>
        </form>
      )}
      <ErrorAlert error={error} />
      {session && <Results session={session} />}
    </>
  );
}

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);

const ROWS: Array<[string, (result: BenchmarkResult) => string]> = [
  ['Status', (result) => (result.error ? `${result.status}: ${result.error.message}` : result.status)],
  ['Time', (result) => seconds(result.timeMs)],
  ['Pages', (result) => String(result.pages ?? '—')],
  ['Page classes', (result) => (result.pageClasses ? `${result.pageClasses.standard} standard, ${result.pageClasses.complex} complex` : '—')],
  ['Accessibility check', (result) => result.wcagStatus ?? '—'],
  ['Violations', (result) => (result.violations ? `${result.violations.count} (${result.violations.rules} rules)` : '—')],
  [
    'Word recall',
    (result) => (result.wordRecall === undefined ? '—' : result.wordRecall === null ? 'no text layer' : `${(result.wordRecall * 100).toFixed(1)}%`),
  ],
  ['Cost estimate', (result) => (result.costUsd === undefined ? '—' : `$${result.costUsd.toFixed(4)}`)],
  ['Credits', (result) => String(result.credits ?? '—')],
];

function Results(props: { session: BenchmarkSession }) {
  const { session } = props;
  const finished = session.results.filter((result) => result.status === 'complete' || result.status === 'failed').length;
  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">Results</h2>
      <p role="status">
        {session.status === 'complete'
          ? `Complete: ${plural(session.results.length, 'pipeline')} compared.`
          : `Running: ${finished} of ${session.results.length} finished; checking every 3 seconds.`}
      </p>
      <table class="compare">
        <caption class="visually-hidden">Pipelines side by side</caption>
        <thead>
          <tr>
            <th scope="col">Measure</th>
            {session.results.map((result) => (
              <th key={result.pipeline} scope="col">
                {result.pipeline + 1}. {nameOf(result)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {ROWS.map(([label, value]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              {session.results.map((result) => (
                <td key={result.pipeline}>{value(result)}</td>
              ))}
            </tr>
          ))}
          <tr>
            <th scope="row">Outputs</th>
            {session.results.map((result) => (
              <td key={result.pipeline}>
                {result.downloads ? (
                  <span class="actions">
                    <a href={result.downloads.html}>
                      HTML <span class="visually-hidden">of pipeline {result.pipeline + 1}</span>
                    </a>
                    <a href={result.downloads.pdf}>
                      PDF <span class="visually-hidden">of pipeline {result.pipeline + 1}</span>
                    </a>
                    <a href={result.downloads.report}>
                      Report <span class="visually-hidden">of pipeline {result.pipeline + 1}</span>
                    </a>
                  </span>
                ) : (
                  '—'
                )}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
    </section>
  );
}
