// Codex's web_search on a model bound to Anthropic (SPEC, "Client integration: Responses-API
// agent client", rule 3): on /agent-a it is left out and named in x-relay-dropped, since Codex
// declares it on every request; agent-codex's `webSearch: upstream` makes it Anthropic's own
// search. The generic Responses route maps it either way. Real HTTP to a fake Anthropic upstream.
import t from 'tap';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const claudeUp = await startFakeUpstream();
const dropping = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const searching = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex', options: { webSearch: 'upstream' } }] });
t.teardown(async () => { await dropping.close(); await searching.close(); await claudeUp.close(); });

const keys = new Map<typeof dropping, string>();
for (const relay of [dropping, searching]) {
  const seeded = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'codex-claude', policy: { modelIds: '*' } });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.models.size >= 1);
  keys.set(relay, seeded.relayKey);
}

const ANSWER = {
  id: 'msg_1', type: 'message', role: 'assistant', model: 'codex-claude', content: [{ type: 'text', text: 'hello' }],
  stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 },
};
// As Codex sends it (CLIENTS.md): cached search by default.
const CODEX_TOOLS = [
  { type: 'function', name: 'exec_command', description: 'Runs a command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  { type: 'web_search', external_web_access: false },
];

async function ask(relay: typeof dropping, path: string) {
  claudeUp.reset();
  claudeUp.enqueue({ body: ANSWER });
  const res = await fetch(`${relay.inferenceUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.get(relay)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'codex-claude', store: false, tool_choice: 'auto', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], tools: CODEX_TOOLS }),
  });
  const body = await res.json() as any;
  const sent = claudeUp.lastRequest()?.json as { tools?: Array<{ type?: string; name: string }> } | undefined;
  return { status: res.status, body, dropped: (res.headers.get('x-relay-dropped') ?? '').split(',').map((s) => s.trim()), sent };
}

t.test('on /agent-a, Codex\'s web_search is left out of an Anthropic request and named', async (t) => {
  const got = await ask(dropping, '/agent-a/v1/responses');
  t.equal(got.status, 200);
  t.equal(got.body.output[0].content[0].text, 'hello', 'the answer arrives');
  t.same(got.sent?.tools?.map((tool) => tool.name), ['exec_command'], 'only the function tool reaches Anthropic');
  t.ok(got.dropped.includes('tools.web_search'), `named in x-relay-dropped (${got.dropped.join(', ')})`);
});

t.test('with webSearch: upstream, /agent-a sends Anthropic its own search and names the cached mode', async (t) => {
  const got = await ask(searching, '/agent-a/v1/responses');
  t.equal(got.status, 200);
  t.same(got.sent?.tools?.map((tool) => tool.type ?? tool.name), ['exec_command', 'web_search_20250305'], 'the function and Anthropic\'s web search');
  t.notOk(got.dropped.includes('tools.web_search'), 'the tool itself is not dropped');
  t.ok(got.dropped.includes('tools.web_search.external_web_access'), 'the cached-only mode, which Anthropic has not, is named');
});

t.test('the generic Responses route maps web_search whatever agent-codex is set to', async (t) => {
  const got = await ask(dropping, '/vendor-a/v1/responses');
  t.equal(got.status, 200);
  t.ok(got.sent?.tools?.some((tool) => tool.type === 'web_search_20250305'), 'a client that declares web search on its own gets it');
});
