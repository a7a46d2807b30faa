// Requests translated to Claude carry prompt-cache breakpoints, since their clients (Codex, Chat
// SDKs) send none and would otherwise pay the full input price for the whole conversation on
// every turn: the last tool, the last system block, the last block of the last message and of the
// user message before it (the previous turn's end), never on a thinking block. Passthrough is left byte for byte, a client's own breakpoints included;
// vendor-anthropic's cacheTranslated: false turns the breakpoints off. The cache reads the
// upstream reports are priced at the cache-read rate.
import t from 'tap';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { anthropic, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const EPHEMERAL = { type: 'ephemeral' };
const up = await startFakeUpstream();
const relay = await startRelay();
const off = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS.filter((p) => p.use !== 'vendor-anthropic'), { use: 'vendor-anthropic', options: { cacheTranslated: false } }] });
t.teardown(async () => {
  await relay.close();
  await off.close();
  await up.close();
});
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
const claudeOff = await seedRoute(off, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId));
await settled(off, (s) => s.relayKeys.has(claudeOff.relayKeyId));

const TOOL = { type: 'function', name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };
/** A Codex-like second turn: instructions, two tools, a call and its output. */
const codexTurn = {
  model: 'claude',
  instructions: 'You are a coding agent.',
  tools: [TOOL, { ...TOOL, name: 'apply_patch' }],
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files.' }] },
    { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'README.md' },
  ],
};

/** Every cache_control in a Messages request, by where it sits. */
function breakpoints(body: any): string[] {
  const found: string[] = [];
  body.tools?.forEach((tool: any, i: number) => tool.cache_control && found.push(`tools[${i}]`));
  body.system?.forEach((block: any, i: number) => block.cache_control && found.push(`system[${i}]`));
  body.messages?.forEach((m: any, i: number) => m.content.forEach?.((block: any, j: number) => block.cache_control && found.push(`messages[${i}][${j}] ${block.type}`)));
  return found;
}

t.test('a translated agent turn: the last tool, the last system block, the last message and the user message before it', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, codexTurn);
  t.equal(res.status, 200);
  const sent = up.lastRequest()!.json;
  t.same(breakpoints(sent), ['tools[1]', 'system[0]', 'messages[0][0] text', 'messages[2][0] tool_result']);
  t.same(sent.tools[1].cache_control, EPHEMERAL);
  t.ok(breakpoints(sent).length <= 4, 'within Anthropic\'s four');
});

t.test('a Chat conversation ending in an image: the image is marked; without tools or system, only the message', async (t) => {
  const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from('png').toString('base64')}` } };
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', claude.relayKey, { model: 'claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] }] });
  t.equal(res.status, 200);
  t.same(breakpoints(up.lastRequest()!.json), ['messages[0][1] image']);
});

t.test('passthrough is left as the client wrote it: no breakpoint added, its own kept', async (t) => {
  const own = { model: 'claude', max_tokens: 64, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }], messages: [{ role: 'user', content: 'hi' }] };
  const body = JSON.stringify(own);
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, body);
  t.equal(res.status, 200);
  t.equal(up.lastRequest()!.body.toString(), JSON.stringify({ ...own, model: 'claude-sonnet-4-5' }), 'only the model name changes');
});

t.test('cacheTranslated: false sends the translated request without breakpoints', async (t) => {
  const res = await viaRelay(off, '/vendor-a/v1/responses', claudeOff.relayKey, codexTurn);
  t.equal(res.status, 200);
  t.same(breakpoints(up.lastRequest()!.json), []);
});

t.test('what the upstream reads from the cache is priced at the cache-read rate', async (t) => {
  up.script(() => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...anthropic.message({ model: 'claude-sonnet-4-5', inputTokens: 100, outputTokens: 10 }) as object, usage: { input_tokens: 100, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 0, output_tokens: 10 } }),
  }));
  const res = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, codexTurn);
  t.equal(res.status, 200);
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.cache_read_tokens, 10_000);
  // claude-sonnet-4-5 from the table: 100 x $3 + 10,000 x $0.30 + 10 x $15 per million.
  t.equal(record.cost, 0.00345);
});
