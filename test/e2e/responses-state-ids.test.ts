// Responses ids that cannot be ids: Postgres text holds no NUL (U+0000), so an id holding one, in
// previous_response_id, an item_reference or the {id} of GET/DELETE/input_items, reached the query
// and came back as 503 RELAY_ERR_DATABASE_UNAVAILABLE. It is the client's mistake: a 400 naming the
// field (a 404 on the routes, as for any unknown id), decided before any query; an absurdly long
// response id likewise. An input item whose own id holds NUL does not stop the turn being kept.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { MAX_RESPONSE_ID_LENGTH } from '../../core/responses-state/ids.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream({ text: 'Claude says hello.' });
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'ids-claude' });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId));

const RESPONSES = '/vendor-a/v1/responses';
const LONG = `resp_${'a'.repeat(MAX_RESPONSE_ID_LENGTH)}`;
type OpenAIError = { message: string; param?: string; code?: string };
const errorOf = (text: string): OpenAIError => (JSON.parse(text) as { error: OpenAIError }).error;
const ask = (body: Record<string, unknown>) => viaRelay(relay, RESPONSES, claude.relayKey, { model: 'ids-claude', ...body });

async function call(method: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method, headers: { authorization: `Bearer ${claude.relayKey}` } });
  return { status: res.status, text: await res.text() };
}

t.test('previous_response_id that cannot be an id is a 400 naming it', async (t) => {
  for (const [id, says] of [['resp_\u0000', /NUL/], ['resp_a\u0000b', /NUL/], [LONG, /longer than 256/]] as const) {
    const before = up.requests.length;
    const res = await ask({ input: 'hi', previous_response_id: id });
    t.equal(res.status, 400, `${JSON.stringify(id.slice(0, 12))}: ${res.text.slice(0, 160)}`);
    t.equal(errorOf(res.text).code, 'RELAY_ERR_BAD_REQUEST');
    t.equal(errorOf(res.text).param, 'previous_response_id');
    t.match(errorOf(res.text).message, says);
    t.equal(up.requests.length, before, 'the upstream was never asked');
  }
});

t.test('an item_reference id holding NUL is a 400 naming it', async (t) => {
  const res = await ask({ input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_\u0000' }] });
  t.equal(res.status, 400, res.text.slice(0, 160));
  t.equal(errorOf(res.text).code, 'RELAY_ERR_BAD_REQUEST');
  t.equal(errorOf(res.text).param, '/input/1/id');
  t.match(errorOf(res.text).message, /NUL/);
});

// (A path segment over 100 characters is already a 400 from the listener.)
t.test('GET, DELETE and input_items of an id holding NUL are the usual 404', async (t) => {
  for (const id of ['resp_%00', 'resp_x%00y']) {
    for (const [method, path] of [['GET', `${RESPONSES}/${id}`], ['DELETE', `${RESPONSES}/${id}`], ['GET', `${RESPONSES}/${id}/input_items`]] as const) {
      const res = await call(method, path);
      t.equal(res.status, 404, `${method} ${path.slice(0, 40)}: ${res.text.slice(0, 120)}`);
      t.equal(errorOf(res.text).code, 'RELAY_ERR_RESPONSE_NOT_FOUND');
    }
  }
});

t.test('an input item whose id holds NUL: the turn is still kept and continues', async (t) => {
  const first = await ask({ input: [{ type: 'message', role: 'user', content: 'Remember me.', id: 'msg_\u0000odd' }] });
  t.equal(first.status, 200, first.text.slice(0, 160));
  const id = (JSON.parse(first.text) as { id: string }).id;
  const got = await call('GET', `${RESPONSES}/${id}`);
  t.equal(got.status, 200, 'stored: the write did not fail on the item id');
  const items = await call('GET', `${RESPONSES}/${id}/input_items`);
  t.equal((JSON.parse(items.text) as { data: Array<{ id: string }> }).data[0]?.id, 'msg_\u0000odd', 'the item as sent');
  const next = await ask({ input: 'And now?', previous_response_id: id });
  t.equal(next.status, 200);
  t.match(JSON.stringify(up.lastRequest()!.json), /Remember me\./, 'the earlier turn reached the upstream');
});

t.test('control: an unknown id without NUL is still the 404 it was', async (t) => {
  const res = await ask({ input: 'hi', previous_response_id: 'resp_unknown' });
  t.equal(res.status, 404);
  t.equal(errorOf(res.text).param, 'previous_response_id');
});
