// Operational actions: rebuild the catalog snapshot, mint a candidate master key.
import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { generateMasterKey, reloadSnapshot } from './settings-api.ts';

export function Operations() {
  const [reload, setReload] = useState<{ busy: boolean; message: string | null; error: boolean }>({ busy: false, message: null, error: false });
  const [master, setMaster] = useState<{ busy: boolean; key: string | null; error: string | null }>({ busy: false, key: null, error: null });
  return (
    <section class="card" aria-labelledby="ops-title">
      <h2 class="card-title" id="ops-title">Operations</h2>
      <div class="op">
        <div>
          <h3>Reload catalog</h3>
          <p class="muted">Rebuilds the in-memory catalog snapshot from the database. Changes normally propagate by themselves within a second; this is a manual fallback.</p>
          {reload.message && <p class={reload.error ? 'field-error' : 'saved'} role="status">{reload.message}</p>}
        </div>
        <button type="button" class="btn" disabled={reload.busy} onClick={async () => {
          setReload({ busy: true, message: null, error: false });
          try { await reloadSnapshot(); setReload({ busy: false, message: 'Snapshot rebuilt.', error: false }); }
          catch (err) { setReload({ busy: false, message: errorMessage(err), error: true }); }
        }}>{reload.busy ? 'Reloading…' : 'Reload now'}</button>
      </div>
      <div class="op">
        <div>
          <h3>Generate a master key</h3>
          <p class="muted">Mints a candidate <code>RELAY_MASTER_KEY</code> for encrypting stored host-key values. It is not applied: set it in the environment of every instance and restart.</p>
          {master.error && <p class="field-error" role="alert">{master.error}</p>}
          {master.key && (
            <div class="secret-row">
              <input class="input mono" readOnly value={master.key} aria-label="Generated master key" onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={master.key} />
            </div>
          )}
        </div>
        <button type="button" class="btn" disabled={master.busy} onClick={async () => {
          setMaster({ busy: true, key: null, error: null });
          try { const { masterKey } = await generateMasterKey(); setMaster({ busy: false, key: masterKey, error: null }); }
          catch (err) { setMaster({ busy: false, key: null, error: errorMessage(err) }); }
        }}>{master.busy ? 'Generating…' : 'Generate'}</button>
      </div>
    </section>
  );
}
