import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf } from '../api.ts';
import type { Delivery, Endpoint } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

type TestResult = Awaited<ReturnType<typeof folio.webhooks.test.mutate>>;

export function WebhooksPage() {
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);
  const [error, setError] = useState('');
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');

  const load = async () => {
    try {
      setEndpoints((await folio.webhooks.list.query()).endpoints);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  useEffect(() => void load(), []);

  const run = async (action: () => Promise<unknown>) => {
    setError('');
    try {
      await action();
      await load();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <>
      <h1>Webhooks</h1>
      <p>Folio signs a POST to each endpoint when a conversion completes or fails.</p>
      <ErrorAlert error={error} />
      {secret && <SecretNotice {...secret} onDone={() => setSecret(null)} />}
      <section aria-labelledby="create-heading">
        <h2 id="create-heading">Add an endpoint</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              const created = await folio.webhooks.create.mutate({ url, description: description || undefined });
              setSecret({ url: created.url, secret: created.secret });
              setUrl('');
              setDescription('');
            });
          }}
        >
          <div class="field">
            <label for="webhook-url">Endpoint URL (https)</label>
            <input id="webhook-url" type="url" required value={url} onInput={(event) => setUrl(event.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="webhook-description">Description (optional)</label>
            <input id="webhook-description" value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
          </div>
          <button class="primary" type="submit">
            Add endpoint
          </button>
        </form>
      </section>
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Your endpoints</h2>
        {endpoints.length === 0 && <p>No endpoints yet.</p>}
        {endpoints.map((endpoint) => (
          <EndpointCard key={endpoint.id} endpoint={endpoint} run={run} onSecret={(value) => setSecret({ url: endpoint.url, secret: value })} />
        ))}
      </section>
    </>
  );
}

function SecretNotice(props: { url: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section class="notice" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret for {props.url}</h2>
      <p>
        <strong>Copy it now: it is shown only once.</strong> Your receiver checks each delivery's signature with it.
      </p>
      <p class="secret" id="webhook-secret">
        {props.secret}
      </p>
      <div class="actions">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(props.secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          Copy secret
        </button>
        <button type="button" onClick={props.onDone}>
          I have stored it
        </button>
      </div>
      <p role="status">{copied ? 'Copied to the clipboard.' : ''}</p>
    </section>
  );
}

function EndpointCard(props: { endpoint: Endpoint; run: (action: () => Promise<unknown>) => Promise<void>; onSecret: (secret: string) => void }) {
  const { endpoint, run } = props;
  const [editing, setEditing] = useState(false);
  const [url, setUrl] = useState(endpoint.url);
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [test, setTest] = useState<TestResult | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const id = endpoint.id;
  const headingId = `endpoint-${id}`;

  const showDeliveries = () => run(async () => setDeliveries((await folio.webhooks.deliveries.query({ id, limit: 20 })).deliveries));

  return (
    <article aria-labelledby={headingId}>
      <h3 id={headingId}>{endpoint.url}</h3>
      <p>
        {endpoint.description ? `${endpoint.description}. ` : ''}Events: {endpoint.events.join(', ')}.{' '}
        {endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabledReason ?? 'manual'})`}
        {endpoint.rotatingUntil ? `. The previous secret still signs until ${new Date(endpoint.rotatingUntil).toLocaleString()}` : ''}.
      </p>
      {editing && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              await folio.webhooks.update.mutate({ id, url, description: description || null });
              setEditing(false);
            });
          }}
        >
          <div class="field">
            <label for={`url-${id}`}>Endpoint URL</label>
            <input id={`url-${id}`} type="url" required value={url} onInput={(event) => setUrl(event.currentTarget.value)} />
          </div>
          <div class="field">
            <label for={`description-${id}`}>Description</label>
            <input id={`description-${id}`} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
          </div>
          <button type="submit">Save</button>
        </form>
      )}
      <div class="actions">
        <button type="button" onClick={() => void run(async () => setTest(await folio.webhooks.test.mutate({ id })))}>
          Send test
        </button>
        <button type="button" onClick={() => void showDeliveries()}>
          Delivery history
        </button>
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit
        </button>
        <button type="button" onClick={() => void run(() => folio.webhooks.update.mutate({ id, enabled: !endpoint.enabled }))}>
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" onClick={() => void run(async () => props.onSecret((await folio.webhooks.rotateSecret.mutate({ id })).secret))}>
          Rotate secret
        </button>
        {confirmDelete ? (
          <>
            <button type="button" onClick={() => void run(() => folio.webhooks.remove.mutate({ id }))}>
              Yes, delete
            </button>
            <button type="button" onClick={() => setConfirmDelete(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirmDelete(true)}>
            Delete
          </button>
        )}
      </div>
      {test && (
        <p role="status">
          Test {test.delivered ? 'delivered' : 'failed'}: {test.httpStatus === null ? 'no answer' : `HTTP ${test.httpStatus}`}
          {test.latencyMs === null ? '' : ` in ${test.latencyMs} ms`}
          {test.error ? ` (${test.error})` : ''}.
        </p>
      )}
      {deliveries && (
        <table>
          <caption>Recent deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">HTTP</th>
              <th scope="col">Latency</th>
              <th scope="col">Attempts</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.length === 0 && (
              <tr>
                <td colSpan={5}>No deliveries yet.</td>
              </tr>
            )}
            {deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <td>{delivery.event}</td>
                <td>{delivery.status}</td>
                <td>{delivery.httpStatus ?? '—'}</td>
                <td>{delivery.latencyMs === null ? '—' : `${delivery.latencyMs} ms`}</td>
                <td>{delivery.attempt}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}
