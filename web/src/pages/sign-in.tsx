import { useEffect, useState } from 'preact/hooks';
import { devTokensAvailable, mintDevToken } from '../../../client-sdk/index.ts';
import { messageOf, sdkOptions } from '../api.ts';
import { ErrorAlert } from '../error-alert.tsx';

/** A Bearer token pasted in (`npm run token -- --email you@example.com`); an identity provider's page can replace this later. */
export function SignIn(props: { error: string; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [devAvailable, setDevAvailable] = useState(false);
  const [devEmail, setDevEmail] = useState('');
  const [devError, setDevError] = useState('');
  useEffect(() => void devTokensAvailable(sdkOptions).then(setDevAvailable), []);
  return (
    <>
      <h1>Sign in to Folio</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim()) props.onToken(token.trim());
        }}
      >
        <div class="field">
          <label for="token">Session token</label>
          <input id="token" name="token" type="password" autoComplete="off" required value={token} onInput={(event) => setToken(event.currentTarget.value)} />
        </div>
        <p>
          For local development, <code>npm run token -- --email you@example.com</code> prints one.
        </p>
        <ErrorAlert error={props.error} />
        <button class="primary" type="submit">
          Sign in
        </button>
      </form>
      {devAvailable && (
        <section aria-labelledby="dev-heading">
          <h2 id="dev-heading">Local development</h2>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              setDevError('');
              mintDevToken(sdkOptions, devEmail).then(props.onToken, (caught: unknown) => setDevError(messageOf(caught)));
            }}
          >
            <div class="field">
              <label for="dev-email">Email to sign in as</label>
              <input id="dev-email" type="email" required value={devEmail} onInput={(event) => setDevEmail(event.currentTarget.value)} />
            </div>
            <ErrorAlert error={devError} />
            <button type="submit">Get a development token</button>
          </form>
        </section>
      )}
    </>
  );
}
