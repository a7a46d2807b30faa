// Codex CLI through Relay, end to end: the real `codex exec` (npm @openai/codex, pinned) against
// fake upstreams over real HTTP, once passed through to an OpenAI Responses upstream and once
// translated to an Anthropic Messages upstream. Each run completes a turn in which the model
// calls apply_patch and Codex creates a file. Also: the models document against the spec's field
// table, Codex loading it, attribution in the logs, and the rate-limit signals Codex acts on.
import t, { type Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startRelay, seedRoute, eventually, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { anthropic, faults, parseSse, startFakeUpstream } from '../support/fake-upstream.ts';
import { FINAL_TEXT, HELLO_PATCH, messagesToolUseScript, responsesApplyPatchScript } from '../support/agent-turns.ts';
import { cliEnv, codexBinary, jsonLines, runCli } from '../support/agent-cli.ts';
import { codexHome } from '../support/codex-home.ts';

const CLI_TIMEOUT_MS = 60_000;

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const openaiUp = await startFakeUpstream();
const anthropicUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

const oa = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'codex-openai', upstreamModel: 'gpt-upstream', hostKeys: ['sk-openai-host'] });
const an = await seedRoute(relay, {
  baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'codex-claude', hostKeys: ['sk-ant-host'],
  model_spec: { reasoning: true, reasoningLevels: ['low', 'high'], contextWindow: 200_000, description: 'Claude through Relay' },
});
const pricing = await relay.api('POST', '/api/pricings', {
  metadata: { displayName: 'codex-claude list price' },
  spec: { modelId: an.modelId, hostId: an.hostId, currency: 'USD', inputPerMillion: 3, outputPerMillion: 15 },
});
if (pricing.status !== 201) throw new Error(`pricing: ${pricing.status} ${JSON.stringify(pricing.body)}`);
// One key granted both models, for the document.
const both = await relay.api('POST', '/api/policies', { metadata: { displayName: 'codex both' }, spec: { tier: 'relay', modelIds: [oa.modelId, an.modelId] } });
const bothKey = (await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'codex both' }, spec: { policyId: both.body.metadata.id } })).body.plaintext as string;
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 3 && relay.relay.sync.snapshot().pricings.size >= 1);

const AGENT = `${relay.inferenceUrl}/agent-a/v1`;

async function modelsDocument(key: string): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${AGENT}/models?client_version=0.169.0`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) };
}

async function logsFor(predicate: (e: any) => boolean, count: number): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    const res = await relay.api('GET', '/api/logs?limit=100');
    found = (res.body.items as any[]).filter(predicate);
    return found.length >= count;
  }, 10_000, 100);
  return found;
}

// ------------------------------------------------------------------ the models document

const SPEC_FIELDS = [
  'slug', 'display_name', 'description', 'base_instructions', 'supported_reasoning_levels', 'shell_type', 'visibility',
  'supported_in_api', 'priority', 'support_verbosity', 'truncation_policy', 'context_window', 'experimental_supported_tools',
  'availability_nux', 'upgrade', 'default_verbosity', 'apply_patch_tool_type',
].sort();

t.test('models document: the spec\'s field table, per key, ordered by priority', async (t) => {
  const doc = await modelsDocument(bothKey);
  t.equal(doc.status, 200);
  t.ok(Array.isArray(doc.json.models) && doc.json.models.length === 2, 'the two models the key is granted');
  t.same(Object.keys(doc.json), ['models']);
  const priorities = doc.json.models.map((m: any) => m.priority);
  t.same(priorities, [...priorities].sort((a: number, b: number) => a - b), 'rows in ascending priority');
  for (const m of doc.json.models) {
    const declared = m.slug === 'codex-claude';
    t.same(Object.keys(m).sort(), declared ? SPEC_FIELDS : SPEC_FIELDS.filter((f) => f !== 'context_window'), `${m.slug}: exactly the spec's fields`);
    t.equal(typeof m.display_name, 'string');
    t.equal(typeof m.base_instructions, 'string');
    t.equal(m.shell_type, 'unified_exec');
    t.equal(m.visibility, 'list');
    t.equal(m.supported_in_api, true);
    t.ok(Number.isInteger(m.priority));
    t.equal(typeof m.support_verbosity, 'boolean');
    t.same(m.truncation_policy, { mode: 'bytes', limit: 10_000 });
    t.same(m.experimental_supported_tools, []);
    t.equal(m.availability_nux, null);
    t.equal(m.upgrade, null);
    t.equal(m.default_verbosity, null);
    t.equal(m.apply_patch_tool_type, 'freeform', 'Codex 0.169.0 sends apply_patch only with freeform');
    t.notOk('max_context_window' in m || 'max_output_tokens' in m, 'no maximum is projected');
  }
  const claude = doc.json.models.find((m: any) => m.slug === 'codex-claude');
  const gpt = doc.json.models.find((m: any) => m.slug === 'codex-openai');
  t.equal(claude.context_window, 200_000, 'the catalog\'s context window');
  t.same(claude.supported_reasoning_levels.map((l: any) => l.effort), ['low', 'high'], 'the catalog\'s reasoning levels');
  t.ok(claude.supported_reasoning_levels.every((l: any) => typeof l.description === 'string' && l.description !== ''));
  t.same(gpt.supported_reasoning_levels, [], 'no reasoning options for a model not marked reasoning');
  t.match(claude.description, /^Claude through Relay · hosts: host \w+ \(USD 3\.00 in \/ 15\.00 out per 1M tokens\)$/, 'hosts and per-million rates');
  t.match(gpt.description, /hosts: host \w+ \(no pricing\)/);
});

t.test('models document: only the models this key\'s policy grants; 401 without a key', async (t) => {
  const doc = await modelsDocument(oa.relayKey);
  t.same(doc.json.models.map((m: any) => m.slug), ['codex-openai']);
  const res = await fetch(`${AGENT}/models`);
  t.equal(res.status, 401);
  const body = await res.json() as any;
  t.equal(body.error.code, 'RELAY_ERR_RELAY_KEY_INVALID', 'an OpenAI-shaped error');
  const wrong = await fetch(`${AGENT}/models`, { headers: { authorization: 'Bearer rk_not_a_key' } });
  t.equal(wrong.status, 401);
  const none = await relay.api('POST', '/api/policies', { metadata: { displayName: 'codex none' }, spec: { tier: 'relay', modelIds: [] } });
  const noneKey = await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'codex none' }, spec: { policyId: none.body.metadata.id } });
  await eventually(() => [...relay.relay.sync.snapshot().relayKeys.values()].some((k) => k.metadata.id === noneKey.body.relayKey.metadata.id));
  const empty = await fetch(`${AGENT}/models`, { headers: { authorization: `Bearer ${noneKey.body.plaintext}` } });
  t.equal(empty.status, 403, 'a key that reaches no model gets no (empty, invalid) document');
});

t.test('Codex loads the models document (codex debug models)', async (t) => {
  const doc = await modelsDocument(bothKey);
  const home = codexHome({ baseUrl: AGENT, model: 'codex-claude', modelsJson: doc.text });
  t.teardown(home.cleanup);
  const run = await runCli(codexBinary(), ['debug', 'models'], {
    cwd: home.work, env: cliEnv({ HOME: home.dir, CODEX_HOME: home.dir, RELAY_KEY: bothKey }), timeoutMs: CLI_TIMEOUT_MS,
  });
  t.equal(run.code, 0, `codex debug models exits 0 (${run.stderr.slice(0, 500)})`);
  t.notMatch(run.stderr, /failed to decode/i);
  const loaded = JSON.parse(run.stdout) as { models: any[] };
  t.same(loaded.models.map((m) => m.slug).sort(), ['codex-claude', 'codex-openai'], 'the catalog Codex uses is Relay\'s');
  const claude = loaded.models.find((m) => m.slug === 'codex-claude');
  t.equal(claude.apply_patch_tool_type, 'freeform');
  t.equal(claude.context_window, 200_000);
});

// ------------------------------------------------------------------ codex exec, one turn with apply_patch

async function codexTurn(t: Test, o: { model: string; key: string }) {
  const doc = await modelsDocument(o.key);
  const home = codexHome({ baseUrl: AGENT, model: o.model, modelsJson: doc.text });
  t.teardown(home.cleanup);
  const run = await runCli(codexBinary(), ['exec', '--skip-git-repo-check', '--json', '-C', home.work, 'Create hello.txt containing hello.'], {
    cwd: home.work, env: cliEnv({ HOME: home.dir, CODEX_HOME: home.dir, RELAY_KEY: o.key }), timeoutMs: CLI_TIMEOUT_MS,
  });
  t.notOk(run.timedOut, `codex finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `codex exec exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const events = jsonLines(run.stdout);
  const file = path.join(home.work, 'hello.txt');
  t.ok(existsSync(file), 'apply_patch created the file in the work directory');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');
  t.ok(events.some((e) => e.type === 'item.completed' && e.item?.type === 'file_change'), 'Codex reports the file change');
  t.ok(events.some((e) => e.type === 'item.completed' && e.item?.type === 'agent_message' && e.item.text === FINAL_TEXT), 'and the final message');
  t.ok(events.some((e) => e.type === 'turn.completed'), 'the turn completed');
  return run;
}

t.test('codex exec -> Relay -> OpenAI Responses upstream (passthrough): apply_patch round trip', async (t) => {
  openaiUp.reset();
  openaiUp.script(responsesApplyPatchScript());
  await codexTurn(t, { model: 'codex-openai', key: oa.relayKey });
  const [first, second] = openaiUp.requests;
  t.ok(first && second, 'two model calls');
  t.equal(first.headers.authorization, 'Bearer sk-openai-host', 'the host key goes upstream, not the relay key');
  t.equal(first.json.model, 'gpt-upstream');
  const applyPatch = first.json.tools.find((x: any) => x.name === 'apply_patch');
  t.equal(applyPatch?.type, 'custom', 'Codex sent its freeform apply_patch tool, forwarded as sent');
  t.ok(first.json.tools.some((x: any) => x.type === 'web_search'), 'server-side tools are forwarded on a Responses upstream');
  t.ok(first.json.tools.some((x: any) => x.type === 'namespace'), 'namespaces too');
  t.ok(second.json.input.some((i: any) => i.type === 'custom_tool_call_output' && i.call_id === 'call_relay_e2e_apply_patch'), 'the tool output comes back');

  const events = await logsFor((e) => e.model_slug === 'codex-openai' && e.client === 'codex', 2);
  for (const e of events) {
    t.equal(e.status, 200);
    t.equal(e.inbound_shape, 'openai.responses');
    t.equal(e.upstream_shape, 'openai.responses');
    t.equal(e.relay_key_id, oa.relayKeyId);
    t.ok(e.input_tokens > 0 && e.output_tokens > 0, 'usage read from the passed-through stream');
    t.match(e.extras, { 'session-id': String, 'thread-id': String, 'x-client-request-id': String, 'x-codex-window-id': String, 'x-codex-turn-metadata': String, originator: 'codex_exec', turn_id: String });
    t.equal(e.extras['session-id'], first.headers['session-id']);
  }
});

t.test('codex exec -> Relay -> Anthropic upstream (translated): apply_patch round trip', async (t) => {
  anthropicUp.reset();
  anthropicUp.script(messagesToolUseScript('apply_patch', { input: HELLO_PATCH }));
  await codexTurn(t, { model: 'codex-claude', key: an.relayKey });
  const [first, second] = anthropicUp.requests;
  t.ok(first && second, 'two model calls');
  t.equal(first.headers['x-api-key'], 'sk-ant-host');
  const applyPatch = first.json.tools.find((x: any) => x.name === 'apply_patch');
  t.same(applyPatch?.input_schema?.required, ['input'], 'apply_patch is a function with one string parameter `input`');
  t.notOk(first.json.tools.some((x: any) => x.name === 'web_search' || String(x.type).startsWith('web_search')), 'no web search reaches Anthropic from the Codex route (agent-codex webSearch: drop)');
  t.ok(first.json.tools.some((x: any) => String(x.name).startsWith('multi_agent_v1__')), 'namespace members are flattened');
  const lastUser = second.json.messages.at(-1);
  t.equal(lastUser.content[0].type, 'tool_result', 'the tool output comes back as a tool_result');

  const events = await logsFor((e) => e.model_slug === 'codex-claude' && e.client === 'codex', 2);
  for (const e of events) {
    t.equal(e.status, 200);
    t.equal(e.upstream_shape, 'anthropic.messages');
    t.ok(e.output_tokens > 0);
    t.equal(e.extras.originator, 'codex_exec');
  }
});

t.test('codex exec retries after an in-stream rate limit from a translated upstream', async (t) => {
  anthropicUp.reset();
  anthropicUp.enqueue(faults.anthropicStreamError({ model: 'codex-claude', type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }), { path: '/v1/messages' });
  anthropicUp.script(messagesToolUseScript('apply_patch', { input: HELLO_PATCH }));
  await codexTurn(t, { model: 'codex-claude', key: an.relayKey });
  t.equal(anthropicUp.count, 3, 'the failed stream, then the two turns');
});

// ------------------------------------------------------------------ what Codex acts on, at the HTTP level

const codexBody = (model: string) => ({
  model, stream: true, store: false, tool_choice: 'auto', parallel_tool_calls: false, include: ['reasoning.encrypted_content'],
  input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
});

async function responsesStream(key: string, model: string): Promise<{ status: number; headers: Headers; events: Array<{ event?: string; json: any }> ; text: string }> {
  const res = await fetch(`${AGENT}/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(codexBody(model)),
  });
  const text = await res.text();
  const events = res.headers.get('content-type')?.includes('text/event-stream') ? parseSse(text).map((f) => ({ event: f.event, json: JSON.parse(f.data) })) : [];
  return { status: res.status, headers: res.headers, events, text };
}

t.test('a translated stream ends with response.completed carrying the id and usage', async (t) => {
  anthropicUp.reset();
  const got = await responsesStream(an.relayKey, 'codex-claude');
  t.equal(got.status, 200);
  const last = got.events.at(-1)!;
  t.equal(last.event, 'response.completed');
  t.match(last.json.response.id, /^resp_/);
  t.match(last.json.response.usage, { input_tokens: Number, output_tokens: Number, total_tokens: Number });
});

t.test('a translated stream cut by the upstream ends with response.failed', async (t) => {
  anthropicUp.reset();
  anthropicUp.enqueue(faults.cutStream(anthropic.events({ model: 'codex-claude', chunks: 6 }), 4, 'close'));
  const got = await responsesStream(an.relayKey, 'codex-claude');
  t.equal(got.status, 200);
  t.equal(got.events.at(-1)?.event, 'response.failed');
  t.notOk(got.events.some((e) => e.event === 'response.completed'));
});

t.test('an Anthropic rate limit inside a translated stream becomes response.failed rate_limit_exceeded', async (t) => {
  anthropicUp.reset();
  anthropicUp.enqueue(faults.anthropicStreamError({ model: 'codex-claude', type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }));
  const got = await responsesStream(an.relayKey, 'codex-claude');
  t.equal(got.status, 200);
  const last = got.events.at(-1)!;
  t.equal(last.event, 'response.failed');
  t.equal(last.json.response.error.code, 'rate_limit_exceeded', 'the code Codex reads a retry delay from');
  t.match(last.json.response.error.message, /rate limit/);
  t.match(last.json.response.id, /^resp_/);
});

t.test('an Anthropic 429 before the stream keeps its status and retry-after', async (t) => {
  anthropicUp.reset();
  anthropicUp.enqueue(faults.rateLimit({ vendor: 'anthropic', retryAfter: 7 }));
  const got = await responsesStream(an.relayKey, 'codex-claude');
  t.equal(got.status, 429);
  t.equal(got.headers.get('retry-after'), '7', 'Codex retries an HTTP 429 only with retry-after');
  const body = JSON.parse(got.text);
  t.equal(body.error.type, 'rate_limit_error');
  t.match(body.error.message, /rate limit/);
});

t.test('a relay-side rate limit is a 429 with retry-after and "try again in Ns"', async (t) => {
  const limit = await relay.api('POST', '/api/rate-limits', { metadata: { displayName: 'codex 1 rpm' }, spec: { requestsPerMinute: 1 } });
  const seeded = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'codex-limited', policy: { rateLimitIds: [limit.body.metadata.id] } });
  await eventually(() => relay.relay.sync.snapshot().relayKeyByHash !== undefined && [...relay.relay.sync.snapshot().relayKeys.values()].some((k) => k.metadata.id === seeded.relayKeyId));
  anthropicUp.reset();
  const ok = await responsesStream(seeded.relayKey, 'codex-limited');
  t.equal(ok.status, 200);
  const limited = await responsesStream(seeded.relayKey, 'codex-limited');
  t.equal(limited.status, 429);
  t.match(limited.headers.get('retry-after'), /^\d+$/);
  t.match(JSON.parse(limited.text).error.message, /try again in \d+s/);
});
