// A Responses `input` of the wrong type with Relay's Responses state on (store not false, the
// default): the conversation expansion replaces the client's input with the one it resolved, so a
// wrong one must be refused before it, in the words the request schema uses with store: false (a
// 400 naming /input or /input/<i>), never emptied or trimmed into a request the upstream answers.
// On passthrough the copy Relay keeps for a failover never rewrites a malformed input either.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const claudeUp = await startFakeUpstream({ text: 'Claude says hello.' });
const openaiUp = await startFakeUpstream({ text: 'OpenAI says hello.' });
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
  await openaiUp.close();
});

const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'input-claude', policy: { modelIds: '*' } });
// An OpenAI model that falls back to Claude: its passthrough keeps a copy (responsesState.keepForwarded).
const gpt = await seedRoute(relay, {
  baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'input-gpt', policy: { modelIds: '*' }, model_spec: { fallbacks: [{ modelId: claude.modelId }] },
});
await settled(relay, (s) => [claude, gpt].every((r) => s.relayKeys.has(r.relayKeyId)) && s.modelBySlug('input-gpt')?.spec.fallbacks?.length === 1);
const errorOf = (text: string): { param?: string; message?: string } => (JSON.parse(text) as { error: { param?: string; message?: string } }).error;

const RESPONSES = '/vendor-a/v1/responses';
const cases: Array<[string, unknown, string, string]> = [
  ['one message object, not an array', { role: 'user', content: 'Summarise the contract' }, '/input', '/input: expected string'],
  ['a number', 42, '/input', '/input: expected string'],
  ['null', null, '/input', '/input: expected string'],
  ['an array of strings', ['Summarise the contract'], '/input/0', '/input/0: expected object'],
  ['a string among messages', [{ role: 'user', content: 'first' }, 'second'], '/input/1', '/input/1: expected object'],
];

for (const [what, input, field, message] of cases) {
  t.test(`input as ${what}: the same 400 with and without store`, async (t) => {
    const before = claudeUp.requests.length;
    for (const store of [undefined, true, false]) {
      const res = await viaRelay(relay, RESPONSES, claude.relayKey, { model: 'input-claude', instructions: 'be brief', input, ...(store === undefined ? {} : { store }) });
      t.equal(res.status, 400, `store ${String(store)}: refused`);
      t.equal(errorOf(res.text).param, field, 'names the field');
      t.equal(errorOf(res.text).message, message, 'in the schema\'s words');
    }
    t.equal(claudeUp.requests.length, before, 'the upstream was never asked');
  });
}

t.test('a well-formed input still expands and is kept', async (t) => {
  const res = await viaRelay(relay, RESPONSES, claude.relayKey, { model: 'input-claude', input: [{ role: 'user', content: 'Hello.' }] });
  t.equal(res.status, 200);
  const next = await viaRelay(relay, RESPONSES, claude.relayKey, { model: 'input-claude', previous_response_id: JSON.parse(res.text).id, input: 'Again.' });
  t.equal(next.status, 200);
  t.equal((claudeUp.lastRequest()!.json as { messages: unknown[] }).messages.length, 3, 'the earlier turn, its answer and this one');
});

t.test('passthrough: a malformed input continuing a translated turn is forwarded as sent, never rewritten', async (t) => {
  // The first turn is translated, so its id is Relay's: OpenAI cannot resolve it.
  const first = await viaRelay(relay, RESPONSES, gpt.relayKey, { model: 'input-claude', input: 'Turn one.' });
  t.equal(first.status, 200);
  const id = (JSON.parse(first.text) as { id: string }).id;
  const before = openaiUp.requests.length;
  const second = await viaRelay(relay, RESPONSES, gpt.relayKey, { model: 'input-gpt', previous_response_id: id, input: ['a string, not an item'] });
  const sent = openaiUp.requests.slice(before).find((r) => r.pathname === '/v1/responses');
  t.ok(sent, `forwarded to OpenAI (answered ${second.status})`);
  const json = sent!.json as { input?: unknown; previous_response_id?: unknown };
  t.same(json.input, ['a string, not an item'], 'the client\'s input, not an expansion without it');
  t.equal(json.previous_response_id, id, 'as sent: the upstream judges it');
});
