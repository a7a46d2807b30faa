// The Users page (admins): list dashboard users, add one with a role, change a role, disable,
// reset a password, delete.
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client.ts';
import type { DashboardUser, Role } from '../api/types.ts';
import { PageHeader } from '../ui/page-header.tsx';
import { ErrorBanner, Spinner } from '../ui/states.tsx';
import { createUser, deleteUser, listUsers, updateUser } from './users-api.ts';

function AddUserForm({ onAdded }: { onAdded: () => void }) {
  const [form, setForm] = useState({ username: '', password: '', role: 'viewer' as Role });
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  return (
    <form class="card" aria-labelledby="add-user-title" onSubmit={async (e) => {
      e.preventDefault();
      setState({ busy: true, error: null });
      try {
        await createUser(form);
        setForm({ username: '', password: '', role: 'viewer' });
        setState({ busy: false, error: null });
        onAdded();
      } catch (err) { setState({ busy: false, error: errorMessage(err) }); }
    }}>
      <h2 class="card-title" id="add-user-title">Add a user</h2>
      <label class="field"><span>Username</span>
        <input class="input" name="username" required autocomplete="off" value={form.username} onInput={(e) => setForm({ ...form, username: e.currentTarget.value })} /></label>
      <label class="field"><span>Password (8 characters or more)</span>
        <input class="input" name="password" type="password" required minLength={8} autocomplete="new-password" value={form.password} onInput={(e) => setForm({ ...form, password: e.currentTarget.value })} /></label>
      <label class="field"><span>Role</span>
        <select class="input" name="role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as Role })}>
          <option value="viewer">viewer: reads the catalog, logs and usage</option>
          <option value="admin">admin: everything</option>
        </select></label>
      {state.error && <p class="field-error" role="alert">{state.error}</p>}
      <button type="submit" class="btn btn-primary" disabled={state.busy}>{state.busy ? 'Adding…' : 'Add user'}</button>
    </form>
  );
}

function UserRow({ user, onChanged }: { user: DashboardUser; onChanged: (error: string | null) => void }) {
  const act = async (fn: () => Promise<unknown>) => {
    try { await fn(); onChanged(null); } catch (err) { onChanged(errorMessage(err)); }
  };
  return (
    <tr data-username={user.username}>
      <td>{user.username}</td>
      <td>
        <select class="input" aria-label={`Role of ${user.username}`} value={user.role} onChange={(e) => act(() => updateUser(user.username, { role: e.currentTarget.value as Role }))}>
          <option value="admin">admin</option>
          <option value="viewer">viewer</option>
        </select>
      </td>
      <td>{user.enabled ? 'enabled' : 'disabled'}</td>
      <td class="row-actions">
        <button type="button" class="btn btn-small" onClick={() => act(() => updateUser(user.username, { enabled: !user.enabled }))}>{user.enabled ? 'Disable' : 'Enable'}</button>
        <button type="button" class="btn btn-small" onClick={() => {
          const password = window.prompt(`New password for ${user.username} (8 characters or more)`);
          if (password) void act(() => updateUser(user.username, { password }));
        }}>Reset password</button>
        <button type="button" class="btn btn-small btn-danger" onClick={() => {
          if (window.confirm(`Delete ${user.username}?`)) void act(() => deleteUser(user.username));
        }}>Delete</button>
      </td>
    </tr>
  );
}

export function UsersPage() {
  const [users, setUsers] = useState<DashboardUser[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const load = () => { listUsers().then((u) => { setUsers(u); setError(null); }, setError); };
  useEffect(load, []);
  return (
    <>
      <PageHeader title="Users" subtitle="Who signs in to this dashboard. Viewers read the catalog, logs and usage and change nothing." />
      {error ? <ErrorBanner error={error} onRetry={load} /> : users === null ? <Spinner /> : (
        <section class="card">
          {actionError && <p class="field-error" role="alert">{actionError}</p>}
          <table class="table">
            <thead><tr><th>Username</th><th>Role</th><th>Status</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>{users.map((u) => <UserRow key={u.id} user={u} onChanged={(e) => { setActionError(e); load(); }} />)}</tbody>
          </table>
        </section>
      )}
      <AddUserForm onAdded={load} />
    </>
  );
}
