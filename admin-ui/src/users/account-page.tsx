// The signed-in user's own page: change their password (any role).
import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client.ts';
import type { Whoami } from '../api/types.ts';
import { PageHeader } from '../ui/page-header.tsx';
import { changeOwnPassword } from './users-api.ts';

export function AccountPage({ user }: { user: Whoami }) {
  const [form, setForm] = useState({ current: '', next: '' });
  const [state, setState] = useState<{ busy: boolean; error: string | null; saved: boolean }>({ busy: false, error: null, saved: false });
  if (user.kind !== 'user') return <PageHeader title="Account" subtitle="Signed in with the admin token, which has no password to change here." />;
  return (
    <>
      <PageHeader title="Account" subtitle={`${user.username} · ${user.role ?? 'admin'}`} />
      <form class="card" aria-labelledby="password-title" onSubmit={async (e) => {
        e.preventDefault();
        setState({ busy: true, error: null, saved: false });
        try {
          await changeOwnPassword(form.current, form.next);
          setForm({ current: '', next: '' });
          setState({ busy: false, error: null, saved: true });
        } catch (err) { setState({ busy: false, error: errorMessage(err), saved: false }); }
      }}>
        <h2 class="card-title" id="password-title">Change your password</h2>
        <label class="field"><span>Current password</span>
          <input class="input" name="current-password" type="password" required autocomplete="current-password" value={form.current} onInput={(e) => setForm({ ...form, current: e.currentTarget.value })} /></label>
        <label class="field"><span>New password (8 characters or more)</span>
          <input class="input" name="new-password" type="password" required minLength={8} autocomplete="new-password" value={form.next} onInput={(e) => setForm({ ...form, next: e.currentTarget.value })} /></label>
        {state.error && <p class="field-error" role="alert">{state.error}</p>}
        {state.saved && <p class="saved" role="status">Password changed. Your other sessions were signed out.</p>}
        <button type="submit" class="btn btn-primary" disabled={state.busy}>{state.busy ? 'Saving…' : 'Change password'}</button>
      </form>
    </>
  );
}
