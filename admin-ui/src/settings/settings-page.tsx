// Settings: where usage records go, payload capture, loaded plugins, operations.
import type { RelayConfig } from '../api/types.ts';
import { PageHeader } from '../ui/page-header.tsx';
import { ErrorBanner, Spinner } from '../ui/states.tsx';
import { Badge } from '../ui/badge.tsx';
import { useAsync } from '../ui/use-async.ts';
import { listAll } from '../catalog/catalog-api.ts';
import { getPayloadLogging, getUsageLogging } from './settings-api.ts';
import { PayloadLoggingForm, UsageLoggingForm } from './logging-forms.tsx';
import { Operations } from './operations.tsx';

const SPEC_USAGE_BACKENDS = ['file', 'clickhouse', 'postgres', 'valkey'];
const SPEC_PAYLOAD_BACKENDS = ['file', 's3', 'clickhouse'];

export function SettingsPage({ config }: { config: RelayConfig | null }) {
  const settings = useAsync(() => Promise.all([getUsageLogging(), getPayloadLogging()]), []);
  const optedIn = useAsync(async () => {
    const [policies, keys] = await Promise.all([listAll('policies'), listAll('relay-keys')]);
    return { policies: policies.filter((p) => p.spec.payloadLoggingEnabled === true).length, keys: keys.filter((k) => k.spec.payloadLoggingEnabled === true).length };
  }, []);
  const usageBackends = config?.backends?.usage ?? SPEC_USAGE_BACKENDS;
  const payloadBackends = config?.backends?.payload ?? SPEC_PAYLOAD_BACKENDS;
  const plugins = [...(config?.plugins ?? [])].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  return (
    <>
      <PageHeader title="Settings" subtitle="Runtime settings take effect on every instance without a restart." />
      {settings.error ? <ErrorBanner error={settings.error} onRetry={settings.reload} />
        : !settings.data ? <Spinner />
        : (
          <div class="grid-2 grid-top">
            <UsageLoggingForm initial={settings.data[0]} backends={usageBackends} />
            <PayloadLoggingForm initial={settings.data[1]} backends={payloadBackends} optedIn={optedIn.data} />
          </div>
        )}
      <div class="grid-2 grid-top">
        <section class="card" aria-labelledby="plugins-title">
          <h2 class="card-title" id="plugins-title">Loaded plugins</h2>
          {!config ? <p class="muted">The server's /config.json could not be read.</p>
            : plugins.length === 0 ? <p class="muted">No plugins are loaded.</p>
            : (
              <ul class="plugin-list">
                {plugins.map((p) => <li key={p.name}><span><code>{p.name}</code>{p.source && p.source !== 'builtin' && <span class="muted small"> {p.source}</span>}</span><Badge tone="blue">{p.kind}</Badge></li>)}
              </ul>
            )}
          {config && <p class="muted small">Relay {config.version}. The config file decides what is loaded; a change needs a restart.</p>}
        </section>
        <Operations />
      </div>
    </>
  );
}
