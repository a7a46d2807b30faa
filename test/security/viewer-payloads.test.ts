// Captured payloads are admins' by default: a viewer's GET /api/logs/{id} carries the usage
// record, none of the captured bodies or headers, and payload_withheld: "admin_only"; the
// payload-logging setting's viewersReadPayloads lets viewers read them, and switched off again,
// withholds them again. Over real HTTP: a real Relay, a fake upstream, a signed-in viewer.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'payload-file' }] });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const ANSWER_SECRET = 'answer-with-a-customer-secret-42';
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), text: ANSWER_SECRET, inputTokens: 5, outputTokens: 3 })) }));

const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'payload-gpt', relayKey: { payloadLoggingEnabled: true } });
const on = await relay.api('PUT', '/api/settings/payload-logging', { enabled: true });
await eventually(() => relay.relay.settings.get('payload-logging').enabled);

const PROMPT_SECRET = 'pasted-credential-sk-live-prompt-77';
const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'payload-gpt', messages: [{ role: 'user', content: PROMPT_SECRET }] });
const requestId = answer.headers.get('x-request-id')!;
await usageRecord(relay, requestId);
// Bodies are written up to a second after the usage record.
await eventually(async () => (await relay.api('GET', `/api/logs/${requestId}`)).body.request_body !== undefined, 5_000);

await relay.api('POST', '/api/users', { username: 'vera', password: 'viewer password 1', role: 'viewer' });
const login = await fetch(`${relay.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'vera', password: 'viewer password 1' }) });
const viewerCookie = login.headers.get('set-cookie')!.split(';')[0]!;
const asViewer = async (path: string) => {
  const res = await fetch(relay.controlUrl + path, { headers: { cookie: viewerCookie } });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
};
const PAYLOAD_FIELDS = ['request_body', 'response_body', 'request_truncated', 'response_truncated', 'request_headers', 'response_headers'];

t.test('setup', async (t) => {
  t.equal(on.status, 200);
  t.equal(on.body.viewersReadPayloads, false, 'viewers do not read payloads by default');
  t.equal(answer.status, 200);
  t.equal(login.status, 200);
});

t.test('an admin reads the captured bodies and headers', async (t) => {
  const res = await relay.api('GET', `/api/logs/${requestId}`);
  t.equal(res.status, 200);
  t.match(res.body.request_body, PROMPT_SECRET);
  t.match(res.body.response_body, ANSWER_SECRET);
  t.type(res.body.request_headers, 'object');
  t.notOk('payload_withheld' in res.body);
});

t.test("a viewer reads the usage record, not the payload, and is told why", async (t) => {
  const res = await asViewer(`/api/logs/${requestId}`);
  t.equal(res.status, 200);
  t.equal(res.body.request_id, requestId);
  t.equal(res.body.model_slug, 'payload-gpt', 'the usage record is there');
  t.equal(res.body.input_tokens, 5);
  t.equal(res.body.payload_withheld, 'admin_only');
  for (const field of PAYLOAD_FIELDS) t.notOk(field in res.body, `no ${field}`);
  t.notOk(res.text.includes(PROMPT_SECRET), 'the prompt is not in the answer');
  t.notOk(res.text.includes(ANSWER_SECRET), 'nor the response');
  // The lists and the session views carry usage records only.
  for (const path of ['/api/logs', '/api/usage/events']) {
    const list = await asViewer(path);
    t.equal(list.status, 200);
    t.notOk(list.text.includes(PROMPT_SECRET) || list.text.includes(ANSWER_SECRET), `${path} carries no body`);
  }
  t.equal((await asViewer('/api/settings/payload-logging')).body.viewersReadPayloads, false, 'a viewer reads the setting');
  const change = await fetch(`${relay.controlUrl}/api/settings/payload-logging`, {
    method: 'PUT', headers: { cookie: viewerCookie, 'x-relay-csrf': '1', origin: relay.controlUrl, 'content-type': 'application/json' }, body: JSON.stringify({ viewersReadPayloads: true }),
  });
  t.equal(change.status, 403, 'and cannot change it');
});

t.test('viewersReadPayloads lets viewers read payloads; switched off, they are withheld again', async (t) => {
  const bad = await relay.api('PUT', '/api/settings/payload-logging', { viewersReadPayloads: 'yes' });
  t.equal(bad.status, 400, 'a non-boolean is a 400');
  t.equal(bad.body.error.field, '/viewersReadPayloads');
  const opened = await relay.api('PUT', '/api/settings/payload-logging', { viewersReadPayloads: true });
  t.match(opened.body, { enabled: true, viewersReadPayloads: true }, 'the other fields keep their values');
  await eventually(() => relay.relay.settings.get('payload-logging').viewersReadPayloads);
  const readable = await asViewer(`/api/logs/${requestId}`);
  t.match(readable.body.request_body, PROMPT_SECRET);
  t.notOk('payload_withheld' in readable.body);
  await relay.api('PUT', '/api/settings/payload-logging', { viewersReadPayloads: false });
  await eventually(() => !relay.relay.settings.get('payload-logging').viewersReadPayloads);
  const withheld = await asViewer(`/api/logs/${requestId}`);
  t.equal(withheld.body.payload_withheld, 'admin_only');
  t.notOk(withheld.text.includes(PROMPT_SECRET));
});
