// Issue 38 item 12: a request with a relay key Relay knows but refuses (disabled, expired) is a
// 401, and its usage event still names the key (id and prefix) and its policy: on an inference
// call, on one refused before the pipeline ran (no model), and on a model list. An unknown key
// names nothing.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const disabled = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'refused-model', relayKey: { enabled: false } });
const expired = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'refused-model', relayKey: { expiresAt: new Date(Date.now() - 60_000).toISOString() } });
await settled(relay, (s) => s.relayKeys.has(disabled.relayKeyId) && s.relayKeys.has(expired.relayKeyId));
const prefixOf = async (id: string) => relay.relay.sync.snapshot().relayKeys.get(id)!.spec.prefix;

for (const [name, seeded] of [['disabled', disabled], ['expired', expired]] as const) {
  t.test(`a ${name} key: 401, and the usage event names the key and its policy`, async (t) => {
    const named = { relay_key_id: seeded.relayKeyId, relay_key_prefix: await prefixOf(seeded.relayKeyId), policy_id: seeded.policyId, status: 401, error_code: 'RELAY_ERR_RELAY_KEY_INVALID' };
    t.ok(named.relay_key_prefix, 'the key has a prefix');
    const inference = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: 'refused-model', messages: [{ role: 'user', content: 'hi' }] });
    t.equal(inference.status, 401);
    t.match(await usageRecord(relay, inference.headers.get('x-request-id')!), named, 'an inference call');
    const noModel = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { messages: [] });
    t.equal(noModel.status, 401, 'refused before the pipeline ran: the key is checked first');
    t.match(await usageRecord(relay, noModel.headers.get('x-request-id')!), named, 'a request refused before the pipeline');
    const list = await fetch(`${relay.inferenceUrl}/vendor-a/v1/models`, { headers: { authorization: `Bearer ${seeded.relayKey}` } });
    t.equal(list.status, 401);
    t.match(await usageRecord(relay, list.headers.get('x-request-id')!), named, 'a model list');
  });
}

t.test('an unknown key names no key', async (t) => {
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', 'rk_unknown_key_000000000000', { model: 'refused-model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 401);
  t.match(await usageRecord(relay, got.headers.get('x-request-id')!), { relay_key_id: null, relay_key_prefix: null, policy_id: null });
});
