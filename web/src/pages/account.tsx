import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf } from '../api.ts';
import type { FileItem, Me } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

export function AccountPage(props: { me: Me; onChange: () => void }) {
  const [files, setFiles] = useState<FileItem[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    props.onChange();
    folio.files.list.query().then(
      (result) => setFiles(result.files),
      (caught: unknown) => setError(messageOf(caught)),
    );
  }, []);
  const { balance } = props.me;
  const converted = (files ?? []).filter((file) => file.status === 'completed');
  return (
    <>
      <h1>Account</h1>
      <section aria-labelledby="balance-heading">
        <h2 id="balance-heading">Balance</h2>
        <dl>
          <dt>Plan</dt>
          <dd>{balance.planType === 'paid' ? 'Paid' : 'Free'}</dd>
          <dt>Credits</dt>
          <dd>
            {balance.creditsRemaining} ({balance.creditsHeld} held for running conversions)
          </dd>
          <dt>Free pages left</dt>
          <dd>{balance.freePagesLeft} of 10</dd>
        </dl>
      </section>
      <section aria-labelledby="history-heading">
        <h2 id="history-heading">Conversion history</h2>
        <ErrorAlert error={error} />
        {files && converted.length === 0 && <p>No finished conversions yet.</p>}
        {converted.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Date</th>
                <th scope="col">Pages</th>
                <th scope="col">Cost (credits)</th>
              </tr>
            </thead>
            <tbody>
              {converted.map((file) => (
                <tr key={file.id}>
                  <td>{file.name}</td>
                  <td>{new Date(file.createdAt).toLocaleString()}</td>
                  <td>{file.pages ?? '—'}</td>
                  <td>{file.pages ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {props.me.isAdmin && <GrantCredits onGranted={props.onChange} />}
    </>
  );
}

/** Admins only: credits to a customer by address (a new address gets a customer, its credits waiting for the first sign-in). */
function GrantCredits(props: { onGranted: () => void }) {
  const [email, setEmail] = useState('');
  const [credits, setCredits] = useState('');
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const grant = async (event: Event) => {
    event.preventDefault();
    setError('');
    setMessage('');
    setBusy(true);
    try {
      const receipt = await folio.credits.grant.mutate({ email: email.trim(), credits: Number(credits), reason });
      setMessage(
        `Granted ${receipt.credits} credits to ${receipt.email}; their balance is ${receipt.balance}. ${receipt.receiptSent ? 'A receipt was mailed.' : 'No receipt went out.'}`,
      );
      setCredits('');
      setReason('');
      props.onGranted();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="grant-heading">
      <h2 id="grant-heading">Grant credits</h2>
      {/* the server checks every field, and its answer is shown as a sentence */}
      <form noValidate onSubmit={(event) => void grant(event)}>
        <div class="field">
          <label for="grant-email">Customer email</label>
          <input id="grant-email" type="email" autoComplete="off" maxLength={320} value={email} onInput={(event) => setEmail(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="grant-credits">Credits</label>
          <input id="grant-credits" type="number" min={1} max={1000000} step={1} value={credits} onInput={(event) => setCredits(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="grant-reason">Reason (kept in the audit log)</label>
          <input id="grant-reason" maxLength={500} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
        </div>
        <button class="primary" type="submit" disabled={busy}>
          Grant credits
        </button>
      </form>
      <p role="status">{message}</p>
      <ErrorAlert error={error} />
    </section>
  );
}
