// Boots the dashboard: asks who is signed in and reads /config.json (again after sign-in: it
// needs a session), then shows the sign-in page or the app. Any 401 later (an expired session)
// returns to the sign-in page.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, setUnauthenticatedHandler } from './api/client.ts';
import type { RelayConfig, Whoami } from './api/types.ts';
import { LocationProvider, navigate } from './router.tsx';
import { logout, whoami } from './auth/session.ts';
import { SignInPage } from './auth/sign-in-page.tsx';
import { Shell } from './shell.tsx';
import { Routes } from './routes.tsx';
import { ConfigContext } from './config-context.ts';
import { ErrorBanner, Spinner } from './ui/states.tsx';
import './styles/app.css';

type Session = { state: 'loading' } | { state: 'signed-out'; expired: boolean } | { state: 'signed-in'; user: Whoami } | { state: 'error'; error: unknown };

const loadConfig = () => api.get<RelayConfig>('/config.json').catch(() => null);

function App() {
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const [config, setConfig] = useState<RelayConfig | null>(null);

  const boot = () => {
    setSession({ state: 'loading' });
    void loadConfig().then(setConfig);
    whoami().then(
      (user) => setSession({ state: 'signed-in', user }),
      (err: { status?: number }) => setSession(err.status === 401 ? { state: 'signed-out', expired: false } : { state: 'error', error: err }),
    );
  };

  useEffect(() => {
    setUnauthenticatedHandler(() => setSession((s) => (s.state === 'signed-in' ? { state: 'signed-out', expired: true } : s)));
    boot();
  }, []);

  if (session.state === 'loading') return <div class="boot"><Spinner label="Starting Relay…" /></div>;
  if (session.state === 'error') return <div class="boot"><ErrorBanner error={session.error} onRetry={boot} /></div>;
  if (session.state === 'signed-out') {
    return <SignInPage expired={session.expired} onSignedIn={() => {
      if (window.location.pathname === '/sign-in') navigate('/usage', { replace: true });
      if (!config) void loadConfig().then(setConfig);
      whoami().then((user) => setSession({ state: 'signed-in', user }), () => setSession({ state: 'signed-in', user: { kind: 'user' } }));
    }} />;
  }
  return (
    <ConfigContext.Provider value={config}>
      <Shell user={session.user} config={config} onSignOut={() => { void logout().finally(() => setSession({ state: 'signed-out', expired: false })); }}>
        <Routes config={config} />
      </Shell>
    </ConfigContext.Provider>
  );
}

render(<LocationProvider><App /></LocationProvider>, document.getElementById('app')!);
