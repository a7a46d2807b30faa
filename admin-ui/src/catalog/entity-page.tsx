// Create or edit one catalog entity: the kind's form, validation messages beside the fields,
// delete (with the server's "in use by" answer), and for relay keys the one-time plaintext.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api/client.ts';
import type { Entity, KindName, PlaintextResult } from '../api/types.ts';
import { Link, navigate } from '../router.tsx';
import { ConfirmDialog } from '../ui/dialog.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { ErrorBanner, Spinner } from '../ui/states.tsx';
import { setFlash, takeFlash } from '../ui/flash.ts';
import { useAsync } from '../ui/use-async.ts';
import { formatDateTime } from '../format.ts';
import { createEntity, deleteEntity, getEntity, hostKeyHealth, rotateRelayKey, updateEntity } from './catalog-api.ts';
import { FieldInput, FieldRow } from './field-inputs.tsx';
import { fieldForPointer, getPath, placeInField, setPath } from './fields.ts';
import { HealthDetail } from './health-badge.tsx';
import { KIND_INFO, referencedKinds } from './kinds.ts';
import { PlaintextDialog } from './plaintext-dialog.tsx';
import { missingRequired, specPayload } from './spec-payload.ts';
import { useReferences } from './use-references.ts';
import { useHostOptionFields } from './use-host-options.ts';
import { PresetPicker } from './preset-picker.tsx';
import { ModelRouting } from './model-routing.tsx';

export function EntityPage({ kind, entityRef }: { kind: KindName; entityRef: string }) {
  const isNew = entityRef === 'new';
  const info = KIND_INFO[kind];
  const loaded = useAsync(() => (isNew ? Promise.resolve(undefined) : getEntity(kind, entityRef)), [kind, entityRef]);
  const back = <Link href={`/catalog/${kind}`}>← {info.title}</Link>;

  if (!isNew && loaded.loading && !loaded.data) return <><PageHeader title={info.title} back={back} /><Spinner /></>;
  if (!isNew && loaded.error) {
    const notFound = loaded.error instanceof ApiError && loaded.error.status === 404;
    return (
      <>
        <PageHeader title={notFound ? `No such ${info.singular}` : info.title} back={back} />
        <ErrorBanner error={notFound ? new Error(`There is no ${info.singular} “${entityRef}”. It may have been deleted.`) : loaded.error} onRetry={notFound ? undefined : loaded.reload} />
      </>
    );
  }
  return <EntityForm key={loaded.data?.metadata.updatedAt ?? 'new'} kind={kind} existing={loaded.data} onSaved={loaded.reload} />;
}

function EntityForm({ kind, existing, onSaved }: { kind: KindName; existing?: Entity; onSaved: () => void }) {
  const info = KIND_INFO[kind];
  const refKinds = useMemo(() => referencedKinds(kind), [kind]);
  const refs = useReferences(refKinds);
  const health = useAsync(() => (kind === 'host-keys' && existing ? hostKeyHealth() : Promise.resolve(undefined)), [kind, existing?.metadata.id]);
  const [displayName, setDisplayName] = useState(existing?.metadata.displayName ?? '');
  const [slug, setSlug] = useState('');
  const [spec, setSpec] = useState<Record<string, unknown>>(() => existing ? { ...existing.spec } : info.defaults());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(() => takeFlash());
  const [saving, setSaving] = useState(false);
  const [confirm, setConfirm] = useState<'delete' | 'rotate' | null>(null);
  const [dialogError, setDialogError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [plaintext, setPlaintext] = useState<{ value: string; prefix?: string; rotated: boolean; goTo?: string } | null>(null);
  const optionFields = useHostOptionFields(kind, spec, refs.data);
  const allFields = [...info.fields, ...optionFields];

  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => setNotice(null), 4000);
    return () => clearTimeout(t);
  }, [notice]);

  const update = (key: string, value: unknown) => {
    setSpec((s) => setPath(s, key, value));
    setErrors((e) => { const { [key]: _, ...rest } = e; return rest; });
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setFormError(null);
    const local = missingRequired(kind, spec, !existing, existing?.spec.hasValue === true);
    if (!displayName.trim()) local['/metadata/displayName'] = 'Display name is required.';
    setErrors(local);
    if (Object.keys(local).length > 0) {
      focusFirstError();
      return;
    }
    setSaving(true);
    try {
      const payload = specPayload(kind, spec, existing?.spec);
      if (existing) {
        await updateEntity(kind, existing.metadata.id, { metadata: { displayName: displayName.trim() }, spec: payload });
        setFlash(`Saved ${info.singular} “${displayName.trim()}”.`);
        onSaved();
      } else {
        const created = await createEntity(kind, { metadata: { displayName: displayName.trim(), ...(slug.trim() ? { slug: slug.trim() } : {}) }, spec: payload });
        if (kind === 'relay-keys' && 'plaintext' in created) {
          const result = created as PlaintextResult;
          setPlaintext({ value: result.plaintext, prefix: result.relayKey.spec.prefix as string | undefined, rotated: false, goTo: `/catalog/relay-keys/${result.relayKey.metadata.id}` });
        } else {
          const entity = created as Entity;
          setFlash(`Created ${info.singular} “${entity.metadata.displayName}”.`);
          navigate(`/catalog/${kind}/${entity.metadata.id}`, { replace: true });
        }
      }
    } catch (err) {
      if (err instanceof ApiError && err.field) {
        const key = fieldForPointer(allFields, err.field);
        if (key) {
          // The API prefixes its message with the pointer ("/spec/baseUrl: must match ..."); beside the field it is noise.
          const message = err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
          // As the API wrote it (a message may start with a slug or a name, to be copied as is),
          // after where in the field it points when that is deeper ("item 2, hostId: ...").
          const place = placeInField(key, err.field);
          setErrors({ [key]: place ? `${place}: ${message}` : message });
          focusFirstError();
        } else setFormError(`${err.message} (${err.field})`);
      } else {
        setFormError(errorMessage(err));
      }
    } finally {
      setSaving(false);
    }
  };

  const remove = async () => {
    if (!existing) return;
    setBusy(true);
    setDialogError(null);
    try {
      await deleteEntity(kind, existing.metadata.id);
      setFlash(`Deleted ${info.singular} “${existing.metadata.displayName}”.`);
      navigate(`/catalog/${kind}`, { replace: true });
    } catch (err) {
      setDialogError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const rotate = async () => {
    if (!existing) return;
    setBusy(true);
    setDialogError(null);
    try {
      const result = await rotateRelayKey(existing.metadata.id);
      setConfirm(null);
      setPlaintext({ value: result.plaintext, prefix: result.relayKey.spec.prefix as string | undefined, rotated: true });
    } catch (err) {
      setDialogError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const closePlaintext = () => {
    const goTo = plaintext?.goTo;
    setPlaintext(null);
    if (goTo) { setFlash('Relay key created.'); navigate(goTo, { replace: true }); } else onSaved();
  };

  const title = existing ? existing.metadata.displayName : `New ${info.singular}`;
  const visibleFields = allFields.filter((f) => !f.when || f.when(spec));

  return (
    <>
      <PageHeader
        title={title}
        subtitle={existing ? <><span class="mono">{existing.metadata.slug}</span> · {info.singular}</> : info.description}
        back={<Link href={`/catalog/${kind}`}>← {info.title}</Link>}
        actions={existing && kind === 'relay-keys' ? <button type="button" class="btn" onClick={() => { setDialogError(null); setConfirm('rotate'); }}>Rotate key</button>
          : existing && kind === 'budgets' ? <Link class="btn" href={`/budgets/${existing.metadata.id}`}>Burn-down and alerts</Link> : undefined}
      />
      {notice && <div class="banner banner-success" role="status">{notice}</div>}
      <div class={`entity-layout${existing ? '' : ' entity-layout-single'}`}>
        <form class="card form" onSubmit={(e) => void submit(e)} noValidate aria-label={`${existing ? 'Edit' : 'Create'} ${info.singular}`}>
          {formError && <div class="banner banner-error" role="alert">{formError}</div>}
          {refs.error && <ErrorBanner error={refs.error} onRetry={refs.reload} />}
          <FieldRow id="f-displayName" label="Display name" required error={errors['/metadata/displayName']}>
            <input id="f-displayName" class="input" type="text" value={displayName} autoFocus={!existing}
              aria-invalid={errors['/metadata/displayName'] ? true : undefined}
              aria-describedby={errors['/metadata/displayName'] ? 'f-displayName-error' : undefined}
              onInput={(e) => { setDisplayName(e.currentTarget.value); setErrors(({ ['/metadata/displayName']: _, ...rest }) => rest); }} />
          </FieldRow>
          {!existing && (
            <FieldRow id="f-slug" label="Slug" help="Optional. The server derives one from the name when left empty; clients address models by slug." error={errors['/metadata/slug']}>
              <input id="f-slug" class="input mono" type="text" value={slug} placeholder="derived from the name" aria-describedby="f-slug-help"
                onInput={(e) => setSlug(e.currentTarget.value)} />
            </FieldRow>
          )}
          {!existing && (kind === 'providers' || kind === 'hosts') && <PresetPicker kind={kind} spec={spec} onApply={setSpec} />}
          {visibleFields.map((field) => (
            <FieldInput key={field.key} field={field} id={`f-${field.key.replace(/\./g, '-')}`} value={getPath(spec, field.key)} spec={spec}
              refs={refs.data} error={errors[field.key]} existing={existing} onChange={(v) => update(field.key, v)} />
          ))}
          <div class="form-actions">
            <button type="submit" class="btn btn-primary" disabled={saving}>{saving ? 'Saving…' : existing ? 'Save changes' : `Create ${info.singular}`}</button>
            <Link class="btn" href={`/catalog/${kind}`}>Cancel</Link>
          </div>
        </form>
        {existing && (
          <aside class="side">
            <section class="card">
              <h2 class="card-title">Details</h2>
              <dl class="details">
                <dt>Id</dt><dd class="mono">{existing.metadata.id}</dd>
                <dt>Slug</dt><dd class="mono">{existing.metadata.slug}</dd>
                {kind === 'relay-keys' && <><dt>Prefix</dt><dd class="mono">{String(existing.spec.prefix ?? '—')}</dd></>}
                <dt>Created</dt><dd>{formatDateTime(existing.metadata.createdAt)}</dd>
                <dt>Updated</dt><dd>{formatDateTime(existing.metadata.updatedAt)}</dd>
              </dl>
            </section>
            {kind === 'host-keys' && (
              <section class="card">
                <h2 class="card-title">Health</h2>
                {health.error ? <ErrorBanner error={health.error} onRetry={health.reload} /> : health.loading ? <Spinner /> : <HealthDetail health={health.data?.get(existing.metadata.id)} />}
              </section>
            )}
            {kind === 'models' && <ModelRouting model={existing} />}
            {kind === 'relay-keys' && (
              <section class="card">
                <h2 class="card-title">Usage</h2>
                <p><Link href={`/logs?relayKeyId=${existing.metadata.id}`}>Requests made with this key →</Link></p>
              </section>
            )}
            <section class="card card-danger">
              <h2 class="card-title">Delete</h2>
              <p class="muted">Deleting is refused while other entities refer to this {info.singular}.</p>
              <button type="button" class="btn btn-danger" onClick={() => { setDialogError(null); setConfirm('delete'); }}>Delete {info.singular}</button>
            </section>
          </aside>
        )}
      </div>
      <ConfirmDialog
        open={confirm === 'delete'}
        title={`Delete ${info.singular}?`}
        message={<>“{existing?.metadata.displayName}” will be removed from the catalog. This cannot be undone.</>}
        confirmLabel="Delete"
        busy={busy}
        error={dialogError && <div class="banner banner-error" role="alert">{dialogError}</div>}
        onConfirm={() => void remove()}
        onClose={() => setConfirm(null)}
      />
      <ConfirmDialog
        open={confirm === 'rotate'}
        title="Rotate relay key?"
        message="A new key is generated and the current one stops working at once. Callers must switch to the new key."
        confirmLabel="Rotate"
        busy={busy}
        error={dialogError && <div class="banner banner-error" role="alert">{dialogError}</div>}
        onConfirm={() => void rotate()}
        onClose={() => setConfirm(null)}
      />
      <PlaintextDialog plaintext={plaintext?.value ?? null} prefix={plaintext?.prefix} rotated={plaintext?.rotated} onClose={closePlaintext} />
    </>
  );
}

function focusFirstError(): void {
  requestAnimationFrame(() => {
    const el = document.querySelector<HTMLElement>('.field-invalid input, .field-invalid select, .field-invalid button');
    el?.focus();
  });
}
