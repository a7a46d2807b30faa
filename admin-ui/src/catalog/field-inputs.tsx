// Draws one catalog field from its descriptor: label, input, help text, and the server's
// validation message for that field right beneath it.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Entity } from '../api/types.ts';
import { Link } from '../router.tsx';
import { useRelayConfig } from '../config-context.ts';
import { KIND_INFO } from './kinds.ts';
import type { Field } from './fields.ts';
import type { References } from './use-references.ts';

export function FieldRow({ id, label, required, help, error, children, group }: {
  id: string; label: string; required?: boolean; help?: ComponentChildren; error?: string; children: ComponentChildren; group?: boolean;
}) {
  const describedBy = [help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const Label = group ? 'span' : 'label';
  return (
    <div class={`field${error ? ' field-invalid' : ''}`} data-field={id} aria-describedby={group ? describedBy : undefined}>
      <Label class="field-label" {...(group ? { id: `${id}-label` } : { for: id })}>
        {label}{required && <span class="field-required" aria-hidden="true"> *</span>}
      </Label>
      {children}
      {help && <p class="field-help" id={`${id}-help`}>{help}</p>}
      {error && <p class="field-error" id={`${id}-error`} role="alert">{error}</p>}
    </div>
  );
}

interface InputProps {
  field: Field;
  id: string;
  value: unknown;
  spec: Record<string, unknown>;
  refs: References | undefined;
  error?: string;
  /** The stored entity when editing (for hasValue and such). */
  existing?: Entity;
  onChange: (value: unknown) => void;
}

export function FieldInput(props: InputProps) {
  const { field, id, error } = props;
  const group = field.type === 'refs' || field.type === 'bindings' || field.type === 'headers' || field.type === 'webhooks' || field.type === 'boolean';
  return (
    <FieldRow id={id} label={field.label} required={field.required} help={field.help} error={error} group={group}>
      <Control {...props} />
    </FieldRow>
  );
}

function describedBy(props: InputProps): string | undefined {
  return [props.field.help ? `${props.id}-help` : '', props.error ? `${props.id}-error` : ''].filter(Boolean).join(' ') || undefined;
}

function Control(props: InputProps) {
  const { field, id, value, onChange, error } = props;
  const common = { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy(props) } as const;
  switch (field.type) {
    case 'text':
      return <TextInput {...props} common={common} />;
    case 'number':
      return <input {...common} class="input input-number" type="number" inputMode={field.integer ? 'numeric' : 'decimal'}
        value={typeof value === 'number' ? String(value) : ''} min={field.min} max={field.max} step={field.step ?? (field.integer ? 1 : 'any')}
        placeholder={field.placeholder} required={field.required}
        onInput={(e) => { const v = e.currentTarget.value; onChange(v === '' ? undefined : Number(v)); }} />;
    case 'boolean':
      return (
        <label class="switch">
          <input {...common} type="checkbox" role="switch" checked={value !== false && value !== undefined ? Boolean(value) : false}
            aria-labelledby={`${id}-label`} onChange={(e) => onChange(e.currentTarget.checked)} />
          <span class="switch-track" aria-hidden="true" />
          <span>{field.onLabel ?? field.label}</span>
        </label>
      );
    case 'select':
      return (
        <select {...common} class="input" value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.currentTarget.value)}>
          {field.options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
        </select>
      );
    case 'ref':
      return <RefSelect {...props} />;
    case 'refs':
      return <RefChecklist {...props} />;
    case 'list':
      return <input {...common} class="input" type="text" placeholder={field.placeholder}
        value={Array.isArray(value) ? value.join(', ') : ''}
        onInput={(e) => {
          const items = e.currentTarget.value.split(',').map((s) => s.trim()).filter(Boolean);
          onChange(items.length ? items : undefined);
        }} />;
    case 'headers':
      return <HeadersEditor {...props} />;
    case 'bindings':
      return <BindingsEditor {...props} />;
    case 'secret':
      return <SecretInput {...props} common={common} />;
    case 'datetime':
      return <DateTimeInput {...props} common={common} />;
    case 'numbers':
      return <NumbersInput {...props} common={common} />;
    case 'webhooks':
      return <WebhooksEditor {...props} />;
  }
}

/** A text input; with `loaded`, suggests the ids this instance loaded and says when the value is none of them. */
function TextInput(props: InputProps & { common: Record<string, unknown> }) {
  const { field, id, value, onChange, common } = props;
  const config = useRelayConfig();
  if (field.type !== 'text') return null;
  const loaded = field.loaded ? config?.[field.loaded] : undefined;
  const suggestions = loaded && loaded.length > 0 ? loaded : field.suggestions;
  const text = typeof value === 'string' ? value : '';
  const unknown = loaded !== undefined && text.trim() !== '' && !loaded.includes(text.trim());
  return (
    <>
      <input {...common} class={`input${field.monospace ? ' mono' : ''}`} type="text" value={text}
        placeholder={field.placeholder} required={field.required} list={suggestions ? `${id}-options` : undefined}
        onInput={(e) => onChange(e.currentTarget.value)} />
      {suggestions && <datalist id={`${id}-options`}>{suggestions.map((v) => <option key={v} value={v} />)}</datalist>}
      {unknown && (
        <p class="field-warning" id={`${id}-warning`} role="status">
          This instance has no adapter <code>{text.trim()}</code> loaded{loaded.length > 0 ? <> (it has <code>{loaded.join(', ')}</code>)</> : null}.
          Relay refuses it: add the plugin that provides it to the config first.
        </p>
      )}
    </>
  );
}

function SecretInput(props: InputProps & { common: Record<string, unknown> }) {
  const { field, value, onChange, common } = props;
  const config = useRelayConfig();
  const hasValue = props.existing?.spec.hasValue === true;
  const placeholder = field.type === 'secret' ? field.placeholder : undefined;
  return (
        <>
          {config?.features?.masterKey === false && (
            <div class="banner banner-warning" role="note">RELAY_MASTER_KEY is not set on the server, so it cannot encrypt a stored value. Use an environment variable, or set a master key (Settings can generate one) and restart.</div>
          )}
          <input {...common} class="input mono" type="password" autoComplete="new-password" value={typeof value === 'string' ? value : ''}
            placeholder={hasValue ? 'A value is stored. Type a new one to replace it.' : placeholder}
            onInput={(e) => onChange(e.currentTarget.value || undefined)} />
          {props.existing && <p class="field-note">{hasValue ? '✓ A value is stored (write-only, never shown).' : 'No value stored yet.'}</p>}
        </>
  );
}

function options(props: InputProps & { field: Extract<Field, { type: 'ref' | 'refs' }> }): Entity[] {
  const all = props.refs?.[props.field.kind] ?? [];
  const filter = props.field.filter;
  return filter ? all.filter((e) => filter(e.spec) || e.metadata.id === props.value) : all;
}

function NoneYet({ kind }: { kind: Extract<Field, { type: 'ref' }>['kind'] }) {
  const info = KIND_INFO[kind];
  return <p class="field-note">No {info.title.toLowerCase()} yet. <Link href={`/catalog/${kind}/new`}>Create a {info.singular}</Link> first.</p>;
}

function RefSelect(props: InputProps) {
  const field = props.field as Extract<Field, { type: 'ref' }>;
  const items = options({ ...props, field });
  const value = typeof props.value === 'string' ? props.value : '';
  return (
    <>
      <select id={props.id} class="input" value={value} aria-invalid={props.error ? true : undefined} aria-describedby={describedBy(props)}
        onChange={(e) => props.onChange(e.currentTarget.value || undefined)}>
        <option value="">{field.optional ? '— none —' : `Choose a ${KIND_INFO[field.kind].singular}…`}</option>
        {items.map((e) => <option key={e.metadata.id} value={e.metadata.id}>{e.metadata.displayName} ({e.metadata.slug})</option>)}
      </select>
      {props.refs && items.length === 0 && !field.optional && <NoneYet kind={field.kind} />}
    </>
  );
}

function RefChecklist(props: InputProps) {
  const field = props.field as Extract<Field, { type: 'refs' }>;
  const items = options({ ...props, field });
  const all = props.value === '*';
  const selected = new Set(Array.isArray(props.value) ? props.value as string[] : []);
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id); else next.delete(id);
    props.onChange([...next]);
  };
  return (
    <div class="checklist" role="group" aria-labelledby={`${props.id}-label`}>
      {field.allowAll && (
        <label class="check check-all">
          <input type="checkbox" id={props.id} checked={all} onChange={(e) => props.onChange(e.currentTarget.checked ? '*' : [])} />
          <span>All {KIND_INFO[field.kind].title.toLowerCase()} <code>*</code></span>
        </label>
      )}
      {items.map((e) => (
        <label class="check" key={e.metadata.id}>
          <input type="checkbox" disabled={all} checked={all || selected.has(e.metadata.id)} onChange={(ev) => toggle(e.metadata.id, ev.currentTarget.checked)} />
          <span>{e.metadata.displayName} <span class="muted">{e.metadata.slug}</span></span>
        </label>
      ))}
      {props.refs && items.length === 0 && <p class="field-note">No {KIND_INFO[field.kind].title.toLowerCase()} yet.</p>}
    </div>
  );
}

function HeadersEditor(props: InputProps) {
  const entries = Object.entries((props.value ?? {}) as Record<string, string>);
  const write = (next: Array<[string, string]>) => props.onChange(next.length ? Object.fromEntries(next) : undefined);
  return (
    <div class="rows" role="group" aria-labelledby={`${props.id}-label`}>
      {entries.map(([name, value], i) => (
        <div class="row-edit" key={i}>
          <input class="input mono" aria-label={`Header ${i + 1} name`} placeholder="Header-Name" value={name}
            onInput={(e) => { const next = [...entries]; next[i] = [e.currentTarget.value, value]; write(next); }} />
          <input class="input mono" aria-label={`Header ${i + 1} value`} placeholder="value" value={value}
            onInput={(e) => { const next = [...entries]; next[i] = [name, e.currentTarget.value]; write(next); }} />
          <button type="button" class="btn btn-icon" aria-label={`Remove header ${name || i + 1}`} onClick={() => write(entries.filter((_, j) => j !== i))}>✕</button>
        </div>
      ))}
      <button type="button" class="btn btn-small" id={props.id} onClick={() => write([...entries, [`X-Header-${entries.length + 1}`, '']])}>Add header</button>
    </div>
  );
}

interface Binding { hostId: string; upstreamModel: string; enabled: boolean; weight: number }

function BindingsEditor(props: InputProps) {
  const bindings = (Array.isArray(props.value) ? props.value : []) as Binding[];
  const hosts = props.refs?.hosts ?? [];
  const write = (next: Binding[]) => props.onChange(next);
  const patch = (i: number, change: Partial<Binding>) => write(bindings.map((b, j) => (j === i ? { ...b, ...change } : b)));
  return (
    <div class="rows" role="group" aria-labelledby={`${props.id}-label`}>
      {bindings.length > 0 && (
        <div class="binding-head" aria-hidden="true"><span>Host</span><span>Upstream model</span><span>Weight</span><span>On</span><span /></div>
      )}
      {bindings.map((b, i) => (
        <div class="row-edit binding" key={i}>
          <select class="input" aria-label={`Binding ${i + 1} host`} value={b.hostId} onChange={(e) => patch(i, { hostId: e.currentTarget.value })}>
            <option value="">Choose a host…</option>
            {hosts.map((h) => <option key={h.metadata.id} value={h.metadata.id}>{h.metadata.displayName}</option>)}
          </select>
          <input class="input mono" aria-label={`Binding ${i + 1} upstream model`} placeholder="gpt-4o-mini" value={b.upstreamModel}
            onInput={(e) => patch(i, { upstreamModel: e.currentTarget.value })} />
          <input class="input input-number" type="number" min={0} max={1000} aria-label={`Binding ${i + 1} weight`} value={String(b.weight)}
            onInput={(e) => patch(i, { weight: Number(e.currentTarget.value || 0) })} />
          <label class="check check-compact"><input type="checkbox" checked={b.enabled} aria-label={`Binding ${i + 1} enabled`}
            onChange={(e) => patch(i, { enabled: e.currentTarget.checked })} /><span class="only-narrow">Enabled</span></label>
          <button type="button" class="btn btn-icon" aria-label={`Remove binding ${i + 1}`} onClick={() => write(bindings.filter((_, j) => j !== i))}>✕</button>
        </div>
      ))}
      {props.refs && hosts.length === 0 && <NoneYet kind="hosts" />}
      <button type="button" class="btn btn-small" id={props.id}
        onClick={() => write([...bindings, { hostId: hosts.length === 1 ? hosts[0].metadata.id : '', upstreamModel: '', enabled: true, weight: 1 }])}>
        Add binding
      </button>
    </div>
  );
}

function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function DateTimeInput(props: InputProps & { common: Record<string, unknown> }) {
  const value = typeof props.value === 'string' ? toLocalInput(props.value) : '';
  return (
    <div class="inline-controls">
      <input {...props.common} class="input" type="datetime-local" value={value}
        onInput={(e) => { const v = e.currentTarget.value; props.onChange(v ? new Date(v).toISOString() : null); }} />
      {value && <button type="button" class="btn btn-small" onClick={() => props.onChange(null)}>Never expires</button>}
    </div>
  );
}

/** Comma-separated numbers; the text is kept as typed (so "0." can become "0.5"), the numbers sent. */
function NumbersInput(props: InputProps & { common: Record<string, unknown> }) {
  const { field, value, onChange, common } = props;
  const [text, setText] = useState(Array.isArray(value) ? value.join(', ') : '');
  if (field.type !== 'numbers') return null;
  return <input {...common} class="input mono" type="text" inputMode="decimal" placeholder={field.placeholder} value={text}
    onInput={(e) => {
      setText(e.currentTarget.value);
      const items = e.currentTarget.value.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
      onChange(items.length ? items : undefined);
    }} />;
}

interface Webhook { url: string; format: 'json' | 'slack' }

function WebhooksEditor(props: InputProps) {
  const hooks = (Array.isArray(props.value) ? props.value : []) as Webhook[];
  const write = (next: Webhook[]) => props.onChange(next);
  const patch = (i: number, change: Partial<Webhook>) => write(hooks.map((h, j) => (j === i ? { ...h, ...change } : h)));
  return (
    <div class="rows" role="group" aria-labelledby={`${props.id}-label`}>
      {hooks.map((h, i) => (
        <div class="row-edit" key={i}>
          <input class="input mono" type="url" aria-label={`Webhook ${i + 1} URL`} placeholder="https://hooks.slack.com/services/…" value={h.url}
            onInput={(e) => patch(i, { url: e.currentTarget.value })} />
          <select class="input" aria-label={`Webhook ${i + 1} format`} value={h.format} onChange={(e) => patch(i, { format: e.currentTarget.value as Webhook['format'] })}>
            <option value="json">JSON</option>
            <option value="slack">Slack</option>
          </select>
          <button type="button" class="btn btn-icon" aria-label={`Remove webhook ${i + 1}`} onClick={() => write(hooks.filter((_, j) => j !== i))}>✕</button>
        </div>
      ))}
      <button type="button" class="btn btn-small" id={props.id} onClick={() => write([...hooks, { url: '', format: 'json' }])}>Add webhook</button>
    </div>
  );
}
