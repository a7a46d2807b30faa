// A Messages conversation begun on another vendor (translated: OpenAI's reasoning sealed in a
// thinking block's signature, OpenAI's search in a srvtoolu_relay1. id) and continued on an
// Anthropic binding, which passes it through: Anthropic never gets what it cannot read, the
// client is told in x-relay-dropped, and a body with nothing foreign goes byte for byte.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { sealSignature } from '../../plugins/wire-vendor-b/codec/reasoning-envelope.ts';
import { webSearchBlocks } from '../../plugins/wire-vendor-b/codec/web-search-blocks.ts';

const relay = await startRelay();
const claudeUp = await startFakeUpstream({ text: 'Claude goes on.' });
t.teardown(async () => { await relay.close(); await claudeUp.close(); });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'pt-claude', policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId));

// Blocks as a Messages client got them from turns OpenAI answered through Relay.
const openaiThinking = { type: 'thinking', thinking: 'I should look it up.', signature: sealSignature({ origin: 'openai', encrypted: 'gAAAAABopenai' }) };
const openaiSearch = webSearchBlocks({ id: 'ws_abc', origin: 'openai', query: 'relay', status: 'completed', sources: [{ url: 'https://example.com' }], raw: { id: 'ws_abc', type: 'web_search_call' } });
const claudeThinking = { type: 'thinking', thinking: 'Mine.', signature: 'EqQBCkYIBxgCKkDclaude' };
const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } };

async function send(messages: unknown[], extra: Record<string, unknown> = {}) {
  const body = JSON.stringify({ model: 'pt-claude', max_tokens: 64, messages, ...extra });
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', headers: { 'x-api-key': claude.relayKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body,
  });
  await res.text();
  return { status: res.status, dropped: res.headers.get('x-relay-dropped'), sent: claudeUp.lastRequest()!, body };
}

t.test('OpenAI\'s sealed thinking and search are left out, and the tool loop goes on without thinking', async (t) => {
  const got = await send([
    { role: 'user', content: 'Search, then read a.txt.' },
    { role: 'assistant', content: [openaiThinking, ...openaiSearch, { type: 'text', text: 'Found it.' }, toolUse] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' }] },
  ], { thinking: { type: 'enabled', budget_tokens: 1024 } });
  t.equal(got.status, 200);
  const assistant = got.sent.json.messages[1];
  t.same(assistant.content.map((b: { type: string }) => b.type), ['text', 'tool_use'], 'only what Anthropic can read');
  t.notMatch(got.sent.body.toString(), /relay1\./, 'no envelope reaches Anthropic');
  t.notOk('thinking' in got.sent.json, 'the last assistant turn no longer opens with thinking: thinking is off for this turn');
  t.equal(got.dropped, 'history.thinking, history.web_search, thinking');
});

t.test('an assistant turn left empty goes, and the user turns around it become one', async (t) => {
  const got = await send([
    { role: 'user', content: 'Search.' },
    { role: 'assistant', content: openaiSearch },
    { role: 'user', content: 'And now?' },
  ]);
  t.equal(got.status, 200);
  t.same(got.sent.json.messages, [{ role: 'user', content: [{ type: 'text', text: 'Search.' }, { type: 'text', text: 'And now?' }] }]);
  t.equal(got.dropped, 'history.web_search');
});

t.test('Anthropic\'s own thinking stays, and a body with nothing foreign is forwarded byte for byte', async (t) => {
  const got = await send([
    { role: 'user', content: 'Read a.txt.' },
    { role: 'assistant', content: [claudeThinking, toolUse] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' }] },
  ], { thinking: { type: 'enabled', budget_tokens: 1024 } });
  t.equal(got.status, 200);
  t.equal(got.sent.body.toString(), got.body, 'the bytes as sent');
  t.equal(got.dropped, null);
});
