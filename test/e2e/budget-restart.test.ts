// A spent budget stays spent across a restart: the restarted instance knows its spend from the
// usage log before it admits anything, even under a burst of concurrent requests at start.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-budget-restart-'));
const masterKey = generateMasterKey();
const up = await startFakeUpstream();
let calls = 0;
up.script((req) => {
  calls += 1;
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 500, outputTokens: 500 })) };
});
let relay = await startRelay({ database: 'pglite', dataDir, masterKey });
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'restart-gpt', upstreamModel: 'local-model' });
// 1,000 tokens at 1,000 per million: $1 a request.
await relay.api('POST', '/api/pricings', { metadata: { displayName: 'restart price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
const b = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'Two dollars' }, spec: { scope: { relayKeyId: route.relayKeyId }, window: 'lifetime', limitAmount: 2 } });
await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.pricings.size === 1 && s.byKind('budgets').has(b.body.metadata.id));
const chat = () => viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'restart-gpt', messages: [{ role: 'user', content: 'hi' }] });

t.test('a spent lifetime budget refuses every request of a burst right after a restart', async (t) => {
  for (let i = 0; i < 2; i++) await usageRecord(relay, (await chat()).headers.get('x-request-id')!);
  t.equal((await chat()).status, 429, 'spent before the restart');

  await relay.close();
  relay = await startRelay({ database: 'pglite', dataDir, masterKey });
  await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.byKind('budgets').has(b.body.metadata.id));
  const before = calls;
  const burst = await Promise.all(Array.from({ length: 10 }, () => chat()));
  t.same(burst.map((r) => r.status), Array(10).fill(429), 'every one refused as spent');
  t.match(burst[0].text, /RELAY_ERR_BUDGET_EXCEEDED|Two dollars/);
  t.equal(calls, before, 'none reached the upstream');
});
