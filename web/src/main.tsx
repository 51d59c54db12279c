import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf, session } from './api.ts';
import { AccountPage } from './pages/account.tsx';
import { AdminPage } from './pages/admin.tsx';
import { AlertsPage } from './pages/alerts.tsx';
import { BenchmarkPage } from './pages/benchmark.tsx';
import { ConvertPage } from './pages/convert.tsx';
import { FiguresPage } from './pages/figures.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import type { Me } from './types.ts';
import './style.css';

const ROUTES = [
  { path: '#/convert', label: 'Convert', admin: false },
  { path: '#/figures', label: 'Figures', admin: false },
  { path: '#/benchmark', label: 'Benchmark', admin: false },
  { path: '#/webhooks', label: 'Webhooks', admin: false },
  { path: '#/account', label: 'Account', admin: false },
  { path: '#/admin', label: 'Email admin', admin: true },
  { path: '#/alerts', label: 'Alerts', admin: true },
] as const;

/** `#/figures/<fileId>` belongs to the Figures page; the part after the page's path is its argument. */
const matches = (hash: string, path: string) => hash === path || hash.startsWith(`${path}/`);

function useHashRoute() {
  const [hash, setHash] = useState(location.hash || '#/convert');
  useEffect(() => {
    const onChange = () => setHash(location.hash || '#/convert');
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

function App() {
  const hash = useHashRoute();
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(Boolean(session.token()));
  const [error, setError] = useState('');

  const loadMe = async () => {
    try {
      setMe(await folio.account.me.query());
      setError('');
    } catch (caught) {
      session.clear();
      setMe(null);
      setError(messageOf(caught));
    } finally {
      setChecking(false);
    }
  };
  useEffect(() => {
    if (session.token()) void loadMe();
  }, []);

  const route = ROUTES.find((entry) => matches(hash, entry.path) && (!entry.admin || me?.isAdmin)) ?? ROUTES[0];
  const argument = matches(hash, route.path) ? decodeURIComponent(hash.slice(route.path.length + 1)) : '';
  useEffect(() => {
    document.title = me ? `${route.label} · Folio` : 'Sign in · Folio';
  }, [route, me]);

  const signOut = () => {
    session.clear();
    setMe(null);
  };

  return (
    <>
      <button class="skip" type="button" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header>
        <span class="brand">Folio</span>
        {me && (
          <>
            <nav aria-label="Main">
              <ul>
                {ROUTES.filter((entry) => !entry.admin || me.isAdmin).map((entry) => (
                  <li key={entry.path}>
                    <a href={entry.path} aria-current={entry === route ? 'page' : undefined}>
                      {entry.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <span class="who">{me.email}</span>
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {checking ? (
          <p>Signing in…</p>
        ) : !me ? (
          <SignIn
            error={error}
            onToken={(token) => {
              session.set(token);
              setChecking(true);
              void loadMe();
            }}
          />
        ) : route.path === '#/webhooks' ? (
          <WebhooksPage />
        ) : route.path === '#/account' ? (
          <AccountPage me={me} onChange={loadMe} />
        ) : route.path === '#/figures' ? (
          <FiguresPage fileId={argument} />
        ) : route.path === '#/benchmark' ? (
          <BenchmarkPage onBalanceChange={loadMe} />
        ) : route.path === '#/admin' ? (
          <AdminPage />
        ) : route.path === '#/alerts' ? (
          <AlertsPage />
        ) : (
          <ConvertPage me={me} onBalanceChange={loadMe} />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
