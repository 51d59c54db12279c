import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf } from '../api.ts';
import type { Figure, FileItem } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

/** Without a file: the finished PDFs to choose from. With one: its figures, each beside a text box. */
export function FiguresPage(props: { fileId: string }) {
  return props.fileId ? <FileFigures fileId={props.fileId} /> : <ChooseFile />;
}

function ChooseFile() {
  const [files, setFiles] = useState<FileItem[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    folio.files.list.query().then(
      (result) => setFiles(result.files.filter((file) => file.status === 'completed' && file.contentType === 'application/pdf')),
      (caught: unknown) => setError(messageOf(caught)),
    );
  }, []);
  return (
    <>
      <h1>Describe figures</h1>
      <p>Pictures a conversion could not describe make the document fail its accessibility check. Choose a converted file to describe them.</p>
      <ErrorAlert error={error} />
      {files && files.length === 0 && <p>No converted PDFs yet.</p>}
      {files && files.length > 0 && (
        <ul>
          {files.map((file) => (
            <li key={file.id}>
              <a href={`#/figures/${file.id}`}>{file.name}</a>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

type Outcome = { wcagStatus: 'passed' | 'failed'; figuresNeedingAlt: number; htmlUrl: string | null };

function FileFigures(props: { fileId: string }) {
  const [figures, setFigures] = useState<Figure[] | null>(null);
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  useEffect(() => {
    setFigures(null);
    setError('');
    folio.figures.list.query({ fileId: props.fileId }).then(
      (result) => setFigures(result.figures),
      (caught: unknown) => setError(messageOf(caught)),
    );
    folio.files.list.query().then(
      (result) => setName(result.files.find((file) => file.id === props.fileId)?.name ?? ''),
      () => undefined,
    );
  }, [props.fileId]);

  const saved = async (figure: Figure, result: { wcagStatus: 'passed' | 'failed'; figuresNeedingAlt: number }) => {
    setFigures((current) => current?.map((entry) => (entry.id === figure.id ? figure : entry)) ?? null);
    // the zip was replaced: a fresh link opens the HTML rendered just now
    const link = await folio.conversion.downloadLink.query({ fileId: props.fileId }).catch(() => null);
    setOutcome({ ...result, htmlUrl: link?.htmlUrl ?? null });
  };

  const waiting = figures?.filter((figure) => figure.needsAlt).length ?? 0;
  return (
    <>
      <h1>Describe figures{name ? ` of ${name}` : ''}</h1>
      <p>
        <a href="#/figures">All converted files</a>
      </p>
      <ErrorAlert error={error} />
      <div role="status">
        {outcome && (
          <p>
            Saved, and the HTML, tagged PDF and report were rendered again: the accessibility check {outcome.wcagStatus}
            {outcome.figuresNeedingAlt > 0 ? `, ${outcome.figuresNeedingAlt} still to describe` : ''}.{' '}
            {outcome.htmlUrl && (
              <a href={outcome.htmlUrl} target="_blank" rel="noopener">
                Open the re-rendered HTML (new tab)
              </a>
            )}
          </p>
        )}
      </div>
      {figures && figures.length === 0 && <p>This conversion has no pictures.</p>}
      {figures && figures.length > 0 && (
        <p>
          {figures.length} {figures.length === 1 ? 'picture' : 'pictures'}, {waiting} without a description.
        </p>
      )}
      {figures?.map((figure, index) => (
        <FigureForm key={figure.id} fileId={props.fileId} figure={figure} number={index + 1} onSaved={saved} />
      ))}
    </>
  );
}

function FigureForm(props: {
  fileId: string;
  figure: Figure;
  number: number;
  onSaved: (figure: Figure, result: { wcagStatus: 'passed' | 'failed'; figuresNeedingAlt: number }) => Promise<void>;
}) {
  const { figure } = props;
  const [decorative, setDecorative] = useState(figure.decorative);
  const [alt, setAlt] = useState(figure.alt ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const id = `figure-${figure.id}`;

  const save = async (event: Event) => {
    event.preventDefault();
    setError('');
    setBusy(true);
    try {
      const result = await folio.figures.describe.mutate(
        decorative ? { fileId: props.fileId, figureId: figure.id, decorative: true } : { fileId: props.fileId, figureId: figure.id, alt },
      );
      await props.onSaved(result.figure, result);
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  const state = figure.decorative
    ? 'Marked decorative'
    : figure.needsAlt
      ? 'Needs a description'
      : figure.altSource === 'person'
        ? 'Described by a person'
        : figure.altSource === 'caption'
          ? 'Described from its caption'
          : 'Described by the document';
  return (
    <section class="figure" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>
        Picture {props.number}, page {figure.page}: {state}
      </h2>
      <div class="figure-body">
        <div class="figure-picture">
          {figure.pictureUrl ? (
            <img src={figure.pictureUrl} alt={figure.alt ?? `Figure ${props.number} on page ${figure.page}, not described yet`} />
          ) : (
            <p>No picture could be extracted for this figure.</p>
          )}
        </div>
        <div>
          <dl>
            <dt>Caption</dt>
            <dd>{figure.caption ?? 'None'}</dd>
            <dt>Nearby text</dt>
            <dd>{figure.nearbyText || 'None'}</dd>
            {figure.figureText && (
              <>
                <dt>Words in the picture</dt>
                <dd>{figure.figureText}</dd>
              </>
            )}
          </dl>
          <form onSubmit={(event) => void save(event)}>
            <fieldset>
              <legend>Picture {props.number}</legend>
              <label>
                <input type="radio" name={`${id}-kind`} checked={!decorative} onChange={() => setDecorative(false)} /> Describe it
              </label>
              <label>
                <input type="radio" name={`${id}-kind`} checked={decorative} onChange={() => setDecorative(true)} /> Decorative: it adds nothing to the text
              </label>
            </fieldset>
            {!decorative && (
              <div class="field">
                <label for={`${id}-alt`}>Alt text for picture {props.number}</label>
                <textarea id={`${id}-alt`} rows={3} maxLength={2000} required value={alt} onInput={(event) => setAlt(event.currentTarget.value)} />
              </div>
            )}
            <button class="primary" type="submit" disabled={busy}>
              Save picture {props.number}
            </button>
          </form>
          <ErrorAlert error={error} />
        </div>
      </div>
    </section>
  );
}
