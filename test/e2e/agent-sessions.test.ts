// Agent sessions in the usage API: Codex threads (thread-id, through agent-codex) and Claude Code
// sessions (x-claude-code-session-id, through auth-proxy) sent to a real Relay, then read back
// from GET /api/usage/sessions (turns, models, tokens, cache hit ratio, cost, duration; the
// costliest first) and GET /api/usage/sessions/{id} (the session's requests).
import t from 'tap';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { post, settled, usageRecord } from '../support/relay-client.ts';

const CLIENT_KEY = 'sk-ant-client-own-key';
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };

const relay = await startRelay({ plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const openaiUp = await startFakeUpstream();
const anthropicUp = await startFakeUpstream({ apiKey: CLIENT_KEY });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});
// Each Codex turn: 10,000 prompt tokens, 8,000 of them cached, 500 out.
openaiUp.script((req) => ({
  headers: SSE_HEADERS,
  frames: openai.responseEvents({ model: String(req.json?.model), inputTokens: 10_000, outputTokens: 500 }).map((f) => f.replaceAll('"cached_tokens":0', '"cached_tokens":8000')),
}));
// Each Claude Code turn: 1,000 fresh + 20,000 read from the cache, 300 out.
anthropicUp.script((req) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(anthropic.message({ model: String(req.json?.model), inputTokens: 1_000, outputTokens: 300 })).replace('"cache_read_input_tokens":0', '"cache_read_input_tokens":20000'),
}));

const codex = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'codex-gpt', upstreamModel: 'gpt-5.4' });
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'claude-relay', upstreamModel: 'claude-sonnet-4-5' });
await settled(relay, (s) => s.relayKeys.has(codex.relayKeyId) && s.relayKeys.has(claude.relayKeyId));

// gpt-5.4: 2,000 x 2.50 + 8,000 x 0.25 + 500 x 15 = 14,500 micro-USD a turn (43,500 for three).
const CODEX_TURN_COST = 0.0145;
// claude-sonnet-4-5: 1,000 x 3 + 20,000 x 0.30 + 300 x 15 = 13,500 micro-USD a turn (27,000 for two).

async function codexTurn(thread: string, relayKey = codex.relayKey) {
  const res = await post(`${relay.inferenceUrl}/agent-a/v1/responses`, {
    authorization: `Bearer ${relayKey}`, 'thread-id': thread, 'session-id': thread, 'x-client-request-id': thread, originator: 'codex_exec',
  }, { model: 'codex-gpt', stream: true, input: 'hi' });
  if (res.status !== 200) throw new Error(`codex turn: ${res.status} ${res.text}`);
  return res.headers.get('x-request-id')!;
}

async function claudeTurn(session: string | null) {
  const res = await post(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    'x-api-key': CLIENT_KEY, 'anthropic-version': '2023-06-01', 'X-GW-API-Key': claude.relayKey, 'X-GW-Proxy-Mode': '1',
    'user-agent': 'claude-cli/2.1.197 (external, cli)', ...(session ? { 'x-claude-code-session-id': session } : {}),
  }, { model: 'claude-relay', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
  if (res.status !== 200) throw new Error(`claude turn: ${res.status} ${res.text}`);
  return res.headers.get('x-request-id')!;
}

const ids: string[] = [];
for (let i = 0; i < 3; i++) ids.push(await codexTurn('thread-aaa'));
ids.push(await claudeTurn('cc-session-1'));
ids.push(await codexTurn('thread-bbb'));
ids.push(await claudeTurn('cc-session-1'));
ids.push(await claudeTurn(null));
for (const id of ids) await usageRecord(relay, id);

t.test('sessions: one per Codex thread and Claude Code session, the costliest first', async (t) => {
  const res = await relay.api<any>('GET', '/api/usage/sessions?since=1h');
  t.equal(res.status, 200);
  const sessions = res.body.sessions;
  t.same(sessions.map((s: any) => s.session_id), ['thread-aaa', 'cc-session-1', 'thread-bbb'], 'a request without a session id is in none');
  const [a, cc, b] = sessions;
  t.match(a, {
    client: 'codex', turns: 3, models: ['codex-gpt'], cache_hit_ratio: 0.8,
    totals: { requests: 3, input_tokens: 30_000, cache_read_tokens: 24_000, output_tokens: 1_500, cost: 0.0435 },
  });
  t.ok(a.duration_ms > 0 && Date.parse(a.last_finished_at) - Date.parse(a.first_started_at) === a.duration_ms, 'duration: first start to last finish');
  t.match(cc, {
    client: 'claude-code', turns: 2, models: ['claude-relay'], cache_hit_ratio: Math.round((20_000 / 21_000) * 10_000) / 10_000,
    totals: { input_tokens: 42_000, cache_read_tokens: 40_000, output_tokens: 600, cost: 0.027 },
  });
  t.match(b, { turns: 1, totals: { cost: CODEX_TURN_COST } });
});

t.test('sort=recent: the last active first; limit cuts', async (t) => {
  const recent = await relay.api<any>('GET', '/api/usage/sessions?since=1h&sort=recent');
  t.same(recent.body.sessions.map((s: any) => s.session_id), ['cc-session-1', 'thread-bbb', 'thread-aaa']);
  const one = await relay.api<any>('GET', '/api/usage/sessions?since=1h&limit=1');
  t.same(one.body.sessions.map((s: any) => s.session_id), ['thread-aaa']);
  const byModel = await relay.api<any>('GET', `/api/usage/sessions?since=1h&modelId=${claude.modelId}`);
  t.same(byModel.body.sessions.map((s: any) => s.session_id), ['cc-session-1'], 'filters apply');
});

t.test('one session: its totals and its requests, newest first', async (t) => {
  const res = await relay.api<any>('GET', '/api/usage/sessions/thread-aaa');
  t.equal(res.status, 200);
  t.match(res.body.session, { session_id: 'thread-aaa', turns: 3 });
  t.same(res.body.items.map((e: any) => e.request_id), ids.slice(0, 3).reverse());
  t.ok(res.body.items.every((e: any) => e.extras['thread-id'] === 'thread-aaa'));
  const paged = await relay.api<any>('GET', '/api/usage/sessions/thread-aaa?limit=2');
  t.equal(paged.body.items.length, 2);
  t.type(paged.body.nextCursor, 'string', 'paged by cursor');
  const logs = await relay.api<any>('GET', '/api/logs?sessionId=cc-session-1');
  t.same(logs.body.items.map((e: any) => e.request_id), [ids[5], ids[3]], '/api/logs filters by session too');
});

t.test('an unknown session is a 404 naming it; bad parameters are a 400 naming the parameter', async (t) => {
  const missing = await relay.api<any>('GET', '/api/usage/sessions/no-such-thread');
  t.equal(missing.status, 404);
  t.match(missing.body.error, { code: 'RELAY_ERR_NOT_FOUND', field: 'sessionId' });
  const badLimit = await relay.api<any>('GET', '/api/usage/sessions?limit=0');
  t.equal(badLimit.status, 400);
  t.match(badLimit.body.error, { field: 'limit' });
  const badSort = await relay.api<any>('GET', '/api/usage/sessions?sort=tokens');
  t.equal(badSort.status, 400);
  t.match(badSort.body.error, { field: 'sort' });
});

t.test("Codex's model picker shows a table-priced model's rates, not \"no pricing\"", async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/agent-a/v1/models?client_version=0.169.0`, { headers: { authorization: `Bearer ${codex.relayKey}` } });
  t.equal(res.status, 200);
  const doc = await res.json() as { models: Array<{ slug: string; description: string }> };
  t.match(doc.models.find((m) => m.slug === 'codex-gpt')?.description, /hosts: host \w+ \(USD 2\.50 in \/ 15\.00 out, cached in 0\.25 per 1M tokens\)/);
});

t.test("a session is its relay key's: another team's key sending the same thread-id makes its own session, not turns in this one", async (t) => {
  // Team B: its own policy and relay key on the same model; team A is the seeded key.
  const policy = await relay.api<any>('POST', '/api/policies', { metadata: { displayName: 'team b' }, spec: { tier: 'relay', modelIds: [codex.modelId] } });
  const minted = await relay.api<any>('POST', '/api/relay-keys', { metadata: { displayName: 'team b key' }, spec: { policyId: policy.body.metadata.id } });
  t.equal(minted.status, 201, JSON.stringify(minted.body));
  const teamB = { id: minted.body.relayKey.metadata.id as string, prefix: minted.body.relayKey.spec.prefix as string, plaintext: minted.body.plaintext as string };
  await settled(relay, (s) => s.relayKeys.has(teamB.id));
  const teamA = (await relay.api<any>('GET', `/api/relay-keys/${codex.relayKeyId}`)).body;
  const mine = [await codexTurn('victim-thread-777'), await codexTurn('victim-thread-777')];
  const theirs = await codexTurn('victim-thread-777', teamB.plaintext);
  for (const id of [...mine, theirs]) await usageRecord(relay, id);

  const list = await relay.api<any>('GET', '/api/usage/sessions?since=1h&limit=500');
  const victims = list.body.sessions.filter((s: any) => s.session_id === 'victim-thread-777');
  t.same(victims.map((s: any) => [s.relay_key_id, s.relay_key_prefix, s.turns, s.totals.cost]), [
    [codex.relayKeyId, teamA.spec.prefix, 2, 2 * CODEX_TURN_COST],
    [teamB.id, teamB.prefix, 1, CODEX_TURN_COST],
  ], 'two sessions, each with its own key, turns and cost');

  const ofA = await relay.api<any>('GET', `/api/usage/sessions/victim-thread-777?relayKeyId=${codex.relayKeyId}`);
  t.equal(ofA.status, 200);
  t.match(ofA.body.session, { session_id: 'victim-thread-777', relay_key_id: codex.relayKeyId, turns: 2 });
  t.same(ofA.body.items.map((e: any) => e.request_id), [...mine].reverse(), "team A's session: its requests only");
  t.same(ofA.body.sessions.map((s: any) => s.relay_key_id), [codex.relayKeyId]);
  const ofB = await relay.api<any>('GET', `/api/usage/sessions/victim-thread-777?relayKeyId=${teamB.id}`);
  t.same(ofB.body.items.map((e: any) => e.request_id), [theirs], "team B's session: its request only");

  const all = await relay.api<any>('GET', '/api/usage/sessions/victim-thread-777');
  t.match(all.body.session, { turns: 3, relay_key_id: null, relay_key_prefix: null }, 'without relayKeyId: every request with the id, as before, naming no one key');
  t.same(all.body.sessions.map((s: any) => s.relay_key_id), [codex.relayKeyId, teamB.id], 'and each key\'s session');
  t.equal(all.body.items.length, 3);
  const missing = await relay.api<any>('GET', '/api/usage/sessions/thread-aaa?relayKeyId=' + teamB.id);
  t.equal(missing.status, 404, "another key's session id is not found under this key");
});
