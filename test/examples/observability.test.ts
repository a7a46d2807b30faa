// examples/deploy/observability against a running Relay: every metric the Grafana dashboard's
// queries and the Prometheus alert rules name exists in a real /metrics scrape after a few
// requests (a failover, a fallback, a budget), and every label they group or filter by is one of
// that metric's labels. The Compose wiring (services, mounts, provisioning) is checked as files.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, settled, viaRelay } from '../support/relay-client.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dir = path.join(root, 'examples/deploy/observability');
const read = (p: string) => readFileSync(path.join(dir, p), 'utf8');

const dashboard = JSON.parse(read('grafana/dashboards/relay.json'));
const alerts = parse(read('alerts.yaml'));
const queries: Array<{ where: string; expr: string }> = [
  ...dashboard.panels.flatMap((p: any) => p.targets.map((x: any) => ({ where: `dashboard panel "${p.title}"`, expr: x.expr as string }))),
  ...dashboard.templating.list.map((v: any) => ({ where: `dashboard variable ${v.name}`, expr: v.definition as string })),
  ...alerts.groups.flatMap((g: any) => g.rules.map((r: any) => ({ where: `alert ${r.alert}`, expr: r.expr as string }))),
];

// Labels Prometheus adds to every series, or that a histogram's buckets carry.
const ADDED = new Set(['instance', 'job', 'le']);
// PromQL words that look like names.
const FUNCS = /^(sum|max|min|avg|count|rate|increase|irate|histogram_quantile|label_values|by|without|on|ignoring|group_left|group_right|and|or|unless)$/;

function metricsOf(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\b(relay_[a-z0-9_]+)\b/g)].map((m) => m[1]!))];
}

function labelsOf(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/\b(?:by|on|ignoring|without)\s*\(([^)]*)\)/g)) for (const l of m[1]!.split(',')) if (l.trim()) names.add(l.trim());
  for (const m of expr.matchAll(/\{([^}]*)\}/g)) for (const l of m[1]!.matchAll(/([a-z_]+)\s*(?:=~|!=|!~|=)/g)) names.add(l[1]!);
  for (const m of expr.matchAll(/label_values\([a-z_]+,\s*([a-z_]+)\)/g)) names.add(m[1]!);
  return [...names].filter((l) => !FUNCS.test(l));
}

t.test('the queries name metrics (sanity of the parsing)', async (t) => {
  t.ok(queries.length >= 20, `${queries.length} queries`);
  for (const alert of ['RelayHighErrorRate', 'RelaySlowFirstByte', 'RelayFailoverStorm', 'RelayBudgetNearLimit', 'RelayUsageLogDrops', 'RelayCatalogSnapshotStale']) {
    t.ok(queries.some((q) => q.where === `alert ${alert}`), `alert ${alert} is there`);
  }
  for (const q of queries) t.ok(metricsOf(q.expr).length > 0, `${q.where} names a metric`);
});

t.test('every metric and label they name exists in a scrape of a running Relay', async (t) => {
  const relay = await startRelay();
  const up = await startFakeUpstream();
  const failing = await startFakeUpstream();
  t.teardown(async () => {
    await relay.close();
    await Promise.all([up.close(), failing.close()]);
  });
  failing.script(() => ({ status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"boom","type":"server_error"}}' }));
  const ok = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'obs-ok' });
  const priced = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'obs price' }, spec: { modelId: ok.modelId, hostId: ok.hostId, currency: 'USD', inputPerMillion: 3, outputPerMillion: 15 } });
  t.equal(priced.status, 201);
  // Two keys failing (a failover), then a fallback to obs-ok.
  const primary = await seedRoute(relay, { baseUrl: `${failing.url}/v1`, adapter: 'openai', model: 'obs-primary', hostKeys: ['sk-1', 'sk-2'], policy: { modelIds: '*' }, model_spec: { fallbacks: [{ modelId: ok.modelId }] } });
  const budget = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'obs budget' }, spec: { scope: { relayKeyId: ok.relayKeyId }, window: 'daily', timezone: 'UTC', limitAmount: 100 } });
  t.equal(budget.status, 201);
  for (const s of [ok, primary]) await routeLive(relay, s);
  await settled(relay, (snap) => snap.pricings.size >= 1 && snap.byKind('budgets').has(budget.body.metadata.id));

  const chat = (key: string, model: string, stream: boolean) => viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model, stream, messages: [{ role: 'user', content: 'hi' }] });
  t.equal((await chat(ok.relayKey, 'obs-ok', false)).status, 200);
  t.equal((await chat(ok.relayKey, 'obs-ok', true)).status, 200);
  t.equal((await chat(primary.relayKey, 'obs-primary', false)).status, 200, 'failed over, then fell back');
  t.equal((await chat(ok.relayKey, 'obs-missing', false)).status, 404);

  let text = '';
  await eventually(async () => {
    text = String((await relay.api<string>('GET', '/metrics')).body);
    return /^relay_log_events_written_total\{/m.test(text);
  }, 5_000, 50);
  const typed = new Set([...text.matchAll(/^# TYPE ([a-z0-9_]+) /gm)].map((m) => m[1]!));
  const labels = new Map<string, Set<string>>();
  for (const m of text.matchAll(/^([a-z0-9_]+)\{([^}]*)\} /gm)) {
    const set = labels.get(m[1]!) ?? new Set<string>();
    for (const l of m[2]!.matchAll(/([a-z_]+)="/g)) set.add(l[1]!);
    labels.set(m[1]!, set);
  }
  const exists = (name: string) => typed.has(name) || typed.has(name.replace(/_(bucket|sum|count)$/, ''));

  for (const q of queries) {
    const metrics = metricsOf(q.expr);
    for (const name of metrics) t.ok(exists(name), `${q.where}: ${name} is in /metrics`);
    const known = new Set(metrics.flatMap((n) => [...(labels.get(n) ?? [])]));
    // A metric without samples yet (no drops, no budget) has no label set to compare with.
    if (metrics.every((n) => labels.has(n))) {
      for (const l of labelsOf(q.expr)) t.ok(ADDED.has(l) || known.has(l), `${q.where}: label ${l} is one of ${metrics.join(', ')}'s`);
    }
  }
});

t.test('Compose runs Prometheus, Grafana and the collector on these files', async (t) => {
  const compose = parse(readFileSync(path.join(root, 'examples/deploy/compose.yaml'), 'utf8'), { merge: true });
  for (const name of ['prometheus', 'grafana', 'otel-collector']) t.ok(compose.services[name], `service ${name}`);
  const mounts = (name: string) => (compose.services[name].volumes as string[]).map((v) => v.split(':'));
  for (const [from] of [...mounts('prometheus'), ...mounts('grafana'), ...mounts('otel-collector')]) {
    if (from!.startsWith('./')) t.ok(existsSync(path.join(root, 'examples/deploy', from!)), `${from} exists`);
  }
  t.ok(mounts('prometheus').some(([, to]) => to === '/etc/prometheus/alerts.yaml'), 'the alert rules are mounted');
  const prometheus = parse(read('prometheus.yml'));
  t.same(prometheus.rule_files, ['/etc/prometheus/alerts.yaml']);
  t.same(prometheus.scrape_configs[0].static_configs[0].targets, ['relay-1:8081', 'relay-2:8081'], 'both replicas\' control ports');
  const datasource = parse(read('grafana/provisioning/datasources/prometheus.yaml')).datasources[0];
  t.equal(datasource.uid, 'prometheus');
  for (const p of dashboard.panels) t.equal(p.datasource.uid, datasource.uid, `panel "${p.title}" uses the provisioned data source`);
  t.equal(parse(read('grafana/provisioning/dashboards/relay.yaml')).providers[0].options.path, '/var/lib/grafana/dashboards');
  t.equal(compose.services['relay-1'].environment.OTEL_EXPORTER_OTLP_ENDPOINT, 'http://otel-collector:4318', 'the replicas export traces to the collector');
  t.equal(compose.services['relay-1'].environment.RELAY_OTEL_ENABLED, 'true');
  const collector = parse(read('otel-collector.yaml'));
  t.ok(collector.receivers.otlp.protocols.grpc && collector.receivers.otlp.protocols.http, 'the collector takes OTLP over gRPC and HTTP');
});
