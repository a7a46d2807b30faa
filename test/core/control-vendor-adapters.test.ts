// GET /api/vendor-adapters lists the loaded adapters with the JSON Schema of their host options
// (what the dashboard's host form draws), for signed-in callers only.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, startRelay } from '../../core/testing.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }], database: 'pglite' });
t.teardown(() => relay.close());

t.test('each adapter with its shapes and host-options schema', async (t) => {
  const res = await relay.api('GET', '/api/vendor-adapters');
  t.equal(res.status, 200, JSON.stringify(res.body));
  const byId = new Map((res.body.items as Array<{ id: string; shapes: string[]; hostOptions: any }>).map((a) => [a.id, a]));
  t.same([...byId.keys()], ['anthropic', 'azure-openai', 'openai'], 'sorted ids');
  t.equal(byId.get('openai')!.hostOptions, null, 'openai takes no host options');
  const azure = byId.get('azure-openai')!;
  t.same(azure.shapes, ['openai.chat', 'openai.responses', 'openai.embeddings']);
  t.equal(azure.hostOptions.type, 'object');
  t.equal(azure.hostOptions.additionalProperties, false);
  t.equal(azure.hostOptions.properties.apiVersion.default, '2024-10-21');
  t.match(azure.hostOptions.properties.apiVersion.pattern, /\\d\{4\}/);
  t.same(azure.hostOptions.properties.entra.required, ['tenantId', 'clientId']);
  t.same(azure.hostOptions.properties.api.anyOf.map((o: { const: string }) => o.const), ['deployments', 'v1']);
});

t.test('not readable without credentials', async (t) => {
  const res = await fetch(`${relay.controlUrl}/api/vendor-adapters`);
  t.equal(res.status, 401);
});
