// Boots the dashboard: asks who is signed in and reads /config.json (again after sign-in: it
// needs a session), then shows the sign-in page or the app. Any 401 later (an expired session)
// shows the sign-in page over the app, which keeps its state until the user is back.
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
  // The session ended while signed in: sign-in is shown over the app, which stays as it was
  // (a form being edited keeps its edits; Save again after signing in).
  const [reauth, setReauth] = useState(false);

  const boot = () => {
    setSession({ state: 'loading' });
    void loadConfig().then(setConfig);
    whoami().then(
      (user) => setSession({ state: 'signed-in', user }),
      (err: { status?: number }) => setSession(err.status === 401 ? { state: 'signed-out', expired: false } : { state: 'error', error: err }),
    );
  };

  useEffect(() => {
    // Shown only over a signed-in app (below); a 401 while signed out is the sign-in page's own.
    setUnauthenticatedHandler(() => setReauth(true));
    boot();
  }, []);

  if (session.state === 'loading') return <div class="boot"><Spinner label="Starting Relay…" /></div>;
  if (session.state === 'error') return <div class="boot"><ErrorBanner error={session.error} onRetry={boot} /></div>;
  if (session.state === 'signed-out') {
    return <SignInPage expired={session.expired} onSignedIn={() => {
      setReauth(false);
      if (window.location.pathname === '/sign-in') navigate('/usage', { replace: true });
      if (!config) void loadConfig().then(setConfig);
      whoami().then((user) => setSession({ state: 'signed-in', user }), () => setSession({ state: 'signed-in', user: { kind: 'user' } }));
    }} />;
  }
  return (
    <ConfigContext.Provider value={config}>
      <div inert={reauth} aria-hidden={reauth}>
        <Shell user={session.user} config={config} onSignOut={() => { void logout().finally(() => { setReauth(false); setSession({ state: 'signed-out', expired: false }); }); }}>
          <Routes config={config} user={session.user} />
        </Shell>
      </div>
      {reauth && (
        <div class="reauth-overlay" role="dialog" aria-modal="true" aria-label="Sign in again">
          <SignInPage expired onSignedIn={() => setReauth(false)} />
        </div>
      )}
    </ConfigContext.Provider>
  );
}

render(<LocationProvider><App /></LocationProvider>, document.getElementById('app')!);
