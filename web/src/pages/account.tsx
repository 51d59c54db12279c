import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf } from '../api.ts';
import type { FileItem, Me } from '../types.ts';

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
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
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
    </>
  );
}
