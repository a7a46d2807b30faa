// The dashboard's entity forms: the payload they send (admin-ui/src/catalog/spec-payload.ts; an
// edit is merged into the stored spec, so a field the operator emptied must go out as null, which
// the API clears; left out, it kept its old value while the dashboard said "Saved"), and where in
// a field an API error points (fields.ts placeInField).
import t from 'tap';
import { specPayload } from '../../admin-ui/src/catalog/spec-payload.ts';

t.test('an edit sends null for the fields the operator emptied', async (t) => {
  const stored = { contextWindow: 128000, description: 'fast', reasoning: false, bindings: [] };
  const draft = { ...stored, contextWindow: undefined, description: '' };
  t.same(specPayload('models', draft, stored), { contextWindow: null, description: null, reasoning: false, bindings: [] });
  const host = { providerId: 'p', baseUrl: 'https://x.test', enabled: true, timeoutMs: 1000, headers: { 'x-debug': 'tok' } };
  t.same(specPayload('hosts', { ...host, headers: undefined }, host).headers, null, 'the last header removed');
});

t.test('a create leaves empty fields out; server-set and write-only fields are never nulled', async (t) => {
  t.same(specPayload('models', { contextWindow: undefined, description: '', reasoning: false, bindings: [] }), { reasoning: false, bindings: [] });
  const stored = { hostId: 'h', valueFrom: { kind: 'stored' }, hasValue: true, enabled: true, weight: 1 };
  const payload = specPayload('host-keys', { ...stored }, stored);
  t.notOk('hasValue' in payload);
  t.notOk('value' in payload, 'an untyped secret is not sent, not even as null');
});

t.test('an error inside a list field says which entry', async (t) => {
  const { placeInField } = await import('../../admin-ui/src/catalog/fields.ts');
  t.equal(placeInField('bindings', '/spec/bindings/1/hostId'), 'item 2, hostId');
  t.equal(placeInField('bindings', '/spec/bindings'), '', 'the field itself');
  t.equal(placeInField('headers', '/spec/headers/x~1a'), 'x/a', 'pointer escapes undone');
  t.equal(placeInField('valueFrom.env', '/spec/valueFrom/env'), '');
});

t.test("a host's vendor options: the adapter's schema drawn as fields, emptied groups left out", async (t) => {
  const { hostOptionFields, pruneOptions } = await import('../../admin-ui/src/catalog/host-options.ts');
  const { AzureHostOptions } = await import('../../plugins/vendor-azure-openai/host-options.ts');
  // What GET /api/vendor-adapters sends: the schema as JSON.
  const fields = hostOptionFields(JSON.parse(JSON.stringify(AzureHostOptions)));
  const byKey = new Map(fields.map((f) => [f.key, f]));
  t.same([...byKey.keys()], ['options.api', 'options.apiVersion', 'options.entra.tenantId', 'options.entra.clientId', 'options.entra.tokenUrl', 'options.entra.scope', 'options.dataSourceEndpoints']);
  const api = byKey.get('options.api')!;
  t.equal(api.type, 'select');
  t.same(api.type === 'select' && api.options.map((o) => o.value), ['', 'deployments', 'v1'], 'a choice, blank for the default');
  const version = byKey.get('options.apiVersion')!;
  t.equal(version.type === 'text' && version.placeholder, '2024-10-21', 'the default as placeholder');
  t.equal(byKey.get('options.entra.tenantId')!.required, false, 'Entra fields are not required while Entra is optional');
  t.equal(byKey.get('options.entra.tenantId')!.label, 'Entra: Tenant Id');
  t.same(hostOptionFields(null), [], 'an adapter without host options draws none');
  const { BedrockHostOptions } = await import('../../plugins/vendor-bedrock/host-options.ts');
  const storage = hostOptionFields(JSON.parse(JSON.stringify(BedrockHostOptions))).find((f) => f.key === 'options.storageLocations');
  t.equal(storage?.type, 'list', 'a list of strings is drawn as a list field');
  t.match(storage?.help, /s3:\/\/ prefixes.*e\.g\. s3:\/\/shared-docs\//s, "the list's and its items' descriptions as help");

  const { fieldForPointer } = await import('../../admin-ui/src/catalog/fields.ts');
  t.equal(fieldForPointer(fields, '/spec/options/entra/clientId'), 'options.entra.clientId', "the server's 400 lands on its field");

  t.same(pruneOptions({ api: '', apiVersion: '2025-03-01-preview', entra: { tenantId: '', clientId: undefined } }), { apiVersion: '2025-03-01-preview' });
  t.equal(pruneOptions({ entra: {} }), undefined);
  const stored = { providerId: 'p', baseUrl: 'https://x.test', options: { entra: { tenantId: 't', clientId: 'c' } } };
  t.same(specPayload('hosts', { ...stored, options: { entra: { tenantId: '', clientId: '' } } }, stored).options, null, 'clearing the group clears the options');
});

t.test('presets for OpenAI-compatible servers fill the provider and the host', async (t) => {
  const { UPSTREAM_PRESETS, applyPreset } = await import('../../admin-ui/src/catalog/presets.ts');
  t.same(UPSTREAM_PRESETS.map((p) => p.id), ['openrouter', 'groq', 'mistral', 'deepseek', 'together', 'fireworks', 'vllm', 'ollama', 'lm-studio']);
  const groq = UPSTREAM_PRESETS.find((p) => p.id === 'groq')!;
  t.same(applyPreset('providers', groq, { adapter: '' }), { adapter: 'openai', shapes: ['openai.chat'] });
  t.same(applyPreset('hosts', groq, { providerId: 'p', timeoutMs: 1000 }), { providerId: 'p', timeoutMs: 1000, baseUrl: 'https://api.groq.com/openai/v1' });
  const openrouter = UPSTREAM_PRESETS.find((p) => p.id === 'openrouter')!;
  t.same(applyPreset('hosts', openrouter, {}).headers, { 'http-referer': 'https://relay.example.com', 'x-title': 'Relay' });
  for (const p of UPSTREAM_PRESETS) t.match(p.baseUrl, /^https?:\/\/[^/]+\/.*v1$/, `${p.id}: a base URL with its version path`);
});
