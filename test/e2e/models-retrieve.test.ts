// GET /vendor-a/v1/models/{id} and /vendor-b/v1/models/{id}: the official SDKs' models.retrieve.
// A model the key may use answers in the vendor's model shape; any other id is a 404 in the vendor's error shape.
import t from 'tap';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => { await relay.close(); await up.close(); });

const mine = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'retrievable' });
const theirs = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'not-granted' });
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 2);

const get = async (path: string, key: string) => {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() as any };
};

t.test('vendor-a: a granted model answers in OpenAI\'s model shape', async (t) => {
  const got = await get('/vendor-a/v1/models/retrievable', mine.relayKey);
  t.equal(got.status, 200);
  t.same(Object.keys(got.body).sort(), ['created', 'id', 'object', 'owned_by']);
  t.match(got.body, { id: 'retrievable', object: 'model', owned_by: 'relay', created: Number });
});

t.test('vendor-b: a granted model answers in Anthropic\'s model shape', async (t) => {
  const got = await get('/vendor-b/v1/models/retrievable', mine.relayKey);
  t.equal(got.status, 200);
  t.match(got.body, { type: 'model', id: 'retrievable', display_name: 'retrievable', created_at: String });
});

for (const id of ['not-granted', 'no-such-model']) {
  t.test(`vendor-a: ${id} is a 404 in OpenAI's shape`, async (t) => {
    const got = await get(`/vendor-a/v1/models/${id}`, mine.relayKey);
    t.equal(got.status, 404);
    t.same(Object.keys(got.body), ['error']);
    t.match(got.body.error, { type: 'not_found_error', code: 'RELAY_ERR_MODEL_NOT_FOUND', message: new RegExp(id) });
  });
  t.test(`vendor-b: ${id} is a 404 in Anthropic's shape`, async (t) => {
    const got = await get(`/vendor-b/v1/models/${id}`, mine.relayKey);
    t.equal(got.status, 404);
    t.equal(got.body.type, 'error');
    t.match(got.body.error, { type: 'not_found_error', message: new RegExp(id) });
  });
}

t.test('the other key sees its own model, not this one', async (t) => {
  t.equal((await get('/vendor-b/v1/models/not-granted', theirs.relayKey)).status, 200);
  t.equal((await get('/vendor-b/v1/models/retrievable', theirs.relayKey)).status, 404);
});

t.test('a bad key is a 401, not a model', async (t) => {
  t.equal((await get('/vendor-a/v1/models/retrievable', 'rk_not_a_real_key_0000000000000000')).status, 401);
});
