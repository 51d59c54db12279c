import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf } from '../api.ts';
import type { EmailLogPage, Suppression } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

const STATUSES = ['deferred', 'sent', 'delivery_delayed', 'delivered', 'opened', 'clicked', 'suppressed', 'failed', 'bounced', 'complained'] as const;
const CATEGORIES = ['auth', 'transactional', 'notification', 'alert', 'marketing', 'unknown'] as const;
const PROVIDERS = ['provider_a', 'provider_b', 'mail_api'] as const;

type Filters = { status: string; category: string; provider: string; recipient: string; subject: string };
const NO_FILTERS: Filters = { status: '', category: '', provider: '', recipient: '', subject: '' };

export function AdminPage() {
  return (
    <>
      <h1>Email admin</h1>
      <EmailLog />
      <Suppressions />
    </>
  );
}

function EmailLog() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState<EmailLogPage | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    setError('');
    folio.admin.emailLog
      .query({
        status: (applied.status || undefined) as (typeof STATUSES)[number] | undefined,
        category: (applied.category || undefined) as (typeof CATEGORIES)[number] | undefined,
        provider: (applied.provider || undefined) as (typeof PROVIDERS)[number] | undefined,
        recipient: applied.recipient || undefined,
        subject: applied.subject || undefined,
      })
      .then(setPage, (caught: unknown) => setError(messageOf(caught)));
  }, [applied]);

  const select = (key: 'status' | 'category' | 'provider', label: string, options: readonly string[]) => (
    <div class="field">
      <label for={`filter-${key}`}>{label}</label>
      <select id={`filter-${key}`} value={filters[key]} onChange={(event) => setFilters({ ...filters, [key]: event.currentTarget.value })}>
        <option value="">Any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
  const summary = Object.entries(page?.summary ?? {}).sort((a, b) => b[1] - a[1]);
  const most = Math.max(1, ...summary.map(([, count]) => count));

  return (
    <section aria-labelledby="log-heading">
      <h2 id="log-heading">Send log</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setApplied(filters);
        }}
      >
        {select('status', 'Status', STATUSES)}
        {select('category', 'Category', CATEGORIES)}
        {select('provider', 'Provider', PROVIDERS)}
        <div class="field">
          <label for="filter-recipient">Recipient (exact address)</label>
          <input
            id="filter-recipient"
            type="email"
            value={filters.recipient}
            onInput={(event) => setFilters({ ...filters, recipient: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="filter-subject">Subject contains</label>
          <input id="filter-subject" value={filters.subject} onInput={(event) => setFilters({ ...filters, subject: event.currentTarget.value })} />
        </div>
        <div class="actions">
          <button class="primary" type="submit">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setFilters(NO_FILTERS);
              setApplied(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <ErrorAlert error={error} />
      {page && (
        <>
          <h3 id="summary-heading">Status summary</h3>
          {summary.length === 0 ? (
            <p>No sends match.</p>
          ) : (
            <ul class="bars" aria-labelledby="summary-heading">
              {summary.map(([status, count]) => (
                <li key={status}>
                  <span>{status}:</span>
                  <span class="bar" style={{ width: `${(count / most) * 100}%` }} />
                  <span>{count}</span>
                </li>
              ))}
            </ul>
          )}
          <p role="status">
            {page.total} {page.total === 1 ? 'send' : 'sends'} match.
          </p>
          {page.rows.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">To</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Category</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((row) => (
                  <tr key={row.id}>
                    <td>{new Date(row.createdAt).toLocaleString()}</td>
                    <td>{row.to.join(', ')}</td>
                    <td>{row.subject ?? '—'}</td>
                    <td>{row.category}</td>
                    <td>{row.provider ?? '—'}</td>
                    <td>
                      {row.status}
                      {row.error ? ` (${row.error})` : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}

function Suppressions() {
  const [items, setItems] = useState<Suppression[] | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const load = () =>
    folio.admin.emailSuppressions.query({}).then(
      (result) => setItems(result.suppressions),
      (caught: unknown) => setError(messageOf(caught)),
    );
  useEffect(() => void load(), []);

  const remove = async (email: string) => {
    setError('');
    try {
      await folio.admin.removeEmailSuppression.mutate({ email });
      setConfirming(null);
      await load();
      setMessage(`${email} can be mailed again.`);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <section aria-labelledby="suppressions-heading">
      <h2 id="suppressions-heading">Suppression list</h2>
      <p role="status">{message}</p>
      <ErrorAlert error={error} />
      {items && items.length === 0 && <p>No suppressed addresses.</p>}
      {items && items.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Reason</th>
              <th scope="col">Since</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.email}>
                <td>{item.email}</td>
                <td>{item.reason}</td>
                <td>{new Date(item.createdAt).toLocaleString()}</td>
                <td class="actions">
                  {confirming === item.email ? (
                    <>
                      <button type="button" onClick={() => void remove(item.email)}>
                        Yes, remove {item.email}
                      </button>
                      <button type="button" onClick={() => setConfirming(null)}>
                        Keep
                      </button>
                    </>
                  ) : (
                    <button type="button" onClick={() => setConfirming(item.email)}>
                      Remove <span class="visually-hidden">{item.email}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
