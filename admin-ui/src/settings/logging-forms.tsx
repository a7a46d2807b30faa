// The two runtime logging settings, each with what it does explained beside it.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api/client.ts';
import type { PayloadLoggingSetting, UsageLoggingSetting } from '../api/types.ts';
import { FieldRow } from '../catalog/field-inputs.tsx';
import { Link } from '../router.tsx';
import { formatBytes } from '../format.ts';
import { BACKEND_NOTES } from './backend-notes.ts';
import { putPayloadLogging, putUsageLogging } from './settings-api.ts';

function useSave<T>(save: (v: T) => Promise<T>) {
  const [state, setState] = useState<{ saving: boolean; error: string | null; field?: string; saved: boolean }>({ saving: false, error: null, saved: false });
  useEffect(() => {
    if (!state.saved) return;
    const t = setTimeout(() => setState((s) => ({ ...s, saved: false })), 3000);
    return () => clearTimeout(t);
  }, [state.saved]);
  const run = async (value: T): Promise<T | undefined> => {
    setState({ saving: true, error: null, saved: false });
    try {
      const result = await save(value);
      setState({ saving: false, error: null, saved: true });
      return result ?? value;
    } catch (err) {
      const field = err instanceof ApiError ? err.field : undefined;
      // The API prefixes its message with the pointer ("/maxBytes: expected ..."); beside the field it is noise.
      const message = errorMessage(err);
      setState({ saving: false, error: field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message, field, saved: false });
      return undefined;
    }
  };
  return { ...state, run };
}

function backendOptions(loaded: string[], current: string): string[] {
  return loaded.includes(current) || !current ? loaded : [...loaded, current];
}

export function UsageLoggingForm({ initial, backends }: { initial: UsageLoggingSetting; backends: string[] }) {
  const [backend, setBackend] = useState(initial.backend);
  const save = useSave(putUsageLogging);
  const options = backendOptions(backends, backend);
  return (
    <form class="card form" noValidate aria-labelledby="usage-logging-title" onSubmit={(e) => { e.preventDefault(); void save.run({ backend }); }}>
      <h2 class="card-title" id="usage-logging-title">Usage logging</h2>
      <p class="muted">Every request produces one usage record (key, policy, model, status, tokens, cost, timing). There is no opt-out; this chooses where records are written and read back from for Logs and Usage. A switch takes effect at once, without a restart; records already written stay in the previous backend.</p>
      <FieldRow id="usage-backend" label="Backend" error={save.field ? save.error ?? undefined : undefined} help={BACKEND_NOTES[backend]}>
        <select id="usage-backend" class="input" value={backend} aria-describedby="usage-backend-help" onChange={(e) => setBackend(e.currentTarget.value)}>
          {options.map((b) => <option key={b} value={b} disabled={!backends.includes(b)}>{b}{backends.includes(b) ? '' : ' (plugin not loaded)'}</option>)}
        </select>
      </FieldRow>
      {save.error && !save.field && <div class="banner banner-error" role="alert">{save.error}</div>}
      <div class="form-actions">
        <button type="submit" class="btn btn-primary" disabled={save.saving}>{save.saving ? 'Saving…' : 'Save'}</button>
        {save.saved && <span class="saved" role="status">Saved</span>}
      </div>
    </form>
  );
}

export function PayloadLoggingForm({ initial, backends, optedIn }: { initial: PayloadLoggingSetting; backends: string[]; optedIn: { policies: number; keys: number } | undefined }) {
  const [value, setValue] = useState(initial);
  const save = useSave(putPayloadLogging);
  const options = backendOptions(backends, value.backend);
  const fieldError = (name: string) => (save.field && save.field.replace(/^\//, '') === name ? save.error ?? undefined : undefined);
  return (
    <form class="card form" noValidate aria-labelledby="payload-logging-title" onSubmit={(e) => { e.preventDefault(); void save.run(value); }}>
      <h2 class="card-title" id="payload-logging-title">Payload logging</h2>
      <div class="explain">
        <p>Captures full request and response bodies and attaches them to the log record, readable on a request's detail page. A body is captured only when <strong>both</strong> hold:</p>
        <ol>
          <li>this master switch is on, and</li>
          <li>the request's <Link href="/catalog/policies">policy</Link> or <Link href="/catalog/relay-keys">relay key</Link> has payload logging enabled.</li>
        </ol>
        {optedIn && <p class="muted">Opted in now: {optedIn.policies} {optedIn.policies === 1 ? 'policy' : 'policies'} and {optedIn.keys} relay {optedIn.keys === 1 ? 'key' : 'keys'}.{value.enabled && optedIn.policies + optedIn.keys === 0 && ' Nothing will be captured until one opts in.'}</p>}
      </div>
      <FieldRow id="payload-enabled" label="Master switch" group error={fieldError('enabled')}>
        <label class="switch">
          <input id="payload-enabled" type="checkbox" role="switch" checked={value.enabled} onChange={(e) => setValue({ ...value, enabled: e.currentTarget.checked })} />
          <span class="switch-track" aria-hidden="true" />
          <span>{value.enabled ? 'On: capture bodies for requests that opt in' : 'Off: nothing is captured'}</span>
        </label>
      </FieldRow>
      {backends.length === 0 && (
        <div class="banner banner-warning" role="note">No payload backend is loaded, so nothing can be captured. Add a payload plugin (payload-file, payload-s3 or payload-clickhouse) to the config and restart.</div>
      )}
      <FieldRow id="payload-backend" label="Backend" help={BACKEND_NOTES[value.backend]} error={fieldError('backend')}>
        <select id="payload-backend" class="input" value={value.backend} aria-describedby="payload-backend-help" onChange={(e) => setValue({ ...value, backend: e.currentTarget.value })}>
          {options.map((b) => <option key={b} value={b} disabled={!backends.includes(b)}>{b}{backends.includes(b) ? '' : ' (plugin not loaded)'}</option>)}
        </select>
      </FieldRow>
      <FieldRow id="payload-max" label="Maximum body size (bytes)" error={fieldError('maxBytes')}
        help={`Each body is cut at ${formatBytes(value.maxBytes || 0)}; a cut body is flagged as truncated.`}>
        <input id="payload-max" class="input input-number" type="number" min={1} step={1} value={String(value.maxBytes)} aria-describedby="payload-max-help"
          onInput={(e) => setValue({ ...value, maxBytes: Number(e.currentTarget.value) })} />
      </FieldRow>
      <FieldRow id="payload-viewers" label="Viewers" group error={fieldError('viewersReadPayloads')}>
        <label class="switch">
          <input id="payload-viewers" type="checkbox" role="switch" checked={value.viewersReadPayloads} onChange={(e) => setValue({ ...value, viewersReadPayloads: e.currentTarget.checked })} />
          <span class="switch-track" aria-hidden="true" />
          <span>{value.viewersReadPayloads ? 'Viewers read captured bodies and headers too' : 'Captured bodies and headers are visible to admins only'}</span>
        </label>
      </FieldRow>
      {save.error && !fieldError('enabled') && !fieldError('backend') && !fieldError('maxBytes') && !fieldError('viewersReadPayloads') && <div class="banner banner-error" role="alert">{save.error}</div>}
      <div class="form-actions">
        <button type="submit" class="btn btn-primary" disabled={save.saving}>{save.saving ? 'Saving…' : 'Save'}</button>
        {save.saved && <span class="saved" role="status">Saved</span>}
      </div>
    </form>
  );
}
