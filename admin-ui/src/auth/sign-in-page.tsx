// The sign-in page: username and password, with clear answers for wrong credentials and throttling.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api/client.ts';
import { login } from './session.ts';

export function SignInPage({ onSignedIn, expired }: { onSignedIn: (username: string) => void; expired: boolean }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(expired ? 'Your session has ended. Sign in again to continue.' : null);
  useEffect(() => { document.title = 'Sign in · Relay'; }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!username || !password) { setError('Enter your username and password.'); return; }
    setBusy(true);
    setError(null);
    try {
      const result = await login(username, password);
      onSignedIn(result?.user?.username ?? username);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError('Wrong username or password.');
      else if (err instanceof ApiError && err.status === 429) setError(err.message || 'Too many attempts. Wait a minute and try again.');
      else setError(errorMessage(err));
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <form class="card signin-card" onSubmit={(e) => void submit(e)} noValidate aria-labelledby="signin-title">
        <div class="brand brand-large"><span class="brand-mark" aria-hidden="true">R</span><span>Relay</span></div>
        <h1 id="signin-title">Sign in</h1>
        <p class="muted">Manage models, keys and usage of this gateway.</p>
        {error && <div class="banner banner-error" role="alert">{error}</div>}
        <label class="field-label" for="username">Username</label>
        <input id="username" name="username" class="input" autoComplete="username" autoFocus value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        <label class="field-label" for="password">Password</label>
        <input id="password" name="password" class="input" type="password" autoComplete="current-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit" class="btn btn-primary btn-block" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
