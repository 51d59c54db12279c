import { useState } from 'preact/hooks';

/** A Bearer token pasted in (`npm run token -- --email you@example.com`); an identity provider's page can replace this later. */
export function SignIn(props: { error: string; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
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
        {props.error && (
          <p class="error" role="alert">
            {props.error}
          </p>
        )}
        <button class="primary" type="submit">
          Sign in
        </button>
      </form>
    </>
  );
}
