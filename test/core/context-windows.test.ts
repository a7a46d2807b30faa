// The shipped context-window table (core/context-windows): lookup by the upstream name a binding
// sends, dated and reseller names included, and the model's effective window (its own spec first).
import t from 'tap';
import { effectiveWindow, knownWindowOf } from '../../core/context-windows/lookup.ts';
import { KNOWN_WINDOWS } from '../../core/context-windows/table.ts';
import type { Model } from '../../core/catalog/kinds.ts';

t.test('every entry names a vendor page and a positive window, once', async (t) => {
  const names = new Set<string>();
  for (const entry of KNOWN_WINDOWS) {
    t.ok(entry.tokens > 0, entry.model);
    t.match(entry.source, /^https:\/\/(platform\.claude\.com|learn\.microsoft\.com|ai\.google\.dev|docs\.cloud\.google\.com|cloud\.google\.com)\//, entry.model);
    t.notOk(names.has(entry.model), `${entry.model} is listed once`);
    names.add(entry.model);
  }
});

t.test('dated, versioned and reseller names resolve to the longest table name they start with', async (t) => {
  t.equal(knownWindowOf('claude-sonnet-4-5-20250929')?.model, 'claude-sonnet-4-5');
  t.equal(knownWindowOf('gpt-4o-2024-08-06')?.model, 'gpt-4o');
  t.equal(knownWindowOf('gpt-4o-mini-2024-07-18')?.model, 'gpt-4o-mini', 'not gpt-4o');
  t.equal(knownWindowOf('o3-mini-2025-01-31')?.model, 'o3-mini', 'not o3');
  t.equal(knownWindowOf('claude-haiku-4-5@20251001')?.model, 'claude-haiku-4-5', 'a Vertex id');
  t.equal(knownWindowOf('us.anthropic.claude-haiku-4-5-20251001-v1:0')?.model, 'claude-haiku-4-5', 'a Bedrock id');
  t.equal(knownWindowOf('models/gemini-2.0-flash-lite-001')?.model, 'gemini-2.0-flash-lite');
  t.equal(knownWindowOf('GPT-4.1')?.tokens, 1_047_576, 'case does not matter');
});

t.test('names the table does not know have no window', async (t) => {
  t.equal(knownWindowOf('house-model-7b'), null);
  t.equal(knownWindowOf('gpt-4o1'), null, 'a name must end or continue with a stamp after the table name');
  t.equal(knownWindowOf('claude-sonnet-4-5[1m]'), null, 'a 1M-context marker is not the listed window');
  t.equal(knownWindowOf('claude-sonnet-4-20250514'), null, 'a model no vendor page was read for');
});

function model(spec: Partial<Model['spec']>): Model {
  return { metadata: { id: 'm', slug: 'm' }, spec: { reasoning: false, bindings: [], ...spec } } as unknown as Model;
}

t.test("a model's effective window: its own, else the smallest known of its enabled bindings", async (t) => {
  t.same(effectiveWindow(model({ contextWindow: 5000, bindings: [{ hostId: 'h', upstreamModel: 'gpt-4o', enabled: true, weight: 1 }] })), { tokens: 5000, source: 'spec' });
  const both = effectiveWindow(model({ bindings: [
    { hostId: 'h', upstreamModel: 'gpt-4.1', enabled: true, weight: 1 },
    { hostId: 'h2', upstreamModel: 'gpt-4o-2024-11-20', enabled: true, weight: 1 },
    { hostId: 'h3', upstreamModel: 'unknown-model', enabled: true, weight: 1 },
  ] }));
  t.equal(both?.tokens, 128_000);
  t.equal(both?.source, 'table');
  t.equal(both?.upstreamModel, 'gpt-4o-2024-11-20');
  t.equal(effectiveWindow(model({ bindings: [{ hostId: 'h', upstreamModel: 'gpt-4o', enabled: false, weight: 1 }, { hostId: 'h2', upstreamModel: 'gpt-4.1', enabled: true, weight: 1 }] }))?.tokens, 1_047_576, 'a disabled binding does not count');
  t.equal(effectiveWindow(model({ bindings: [{ hostId: 'h', upstreamModel: 'mystery', enabled: true, weight: 1 }] })), null);
  t.equal(effectiveWindow(undefined), null);
});
