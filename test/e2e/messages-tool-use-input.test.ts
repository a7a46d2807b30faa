// A Messages client's tool_use in history whose input is not an object (42, text, a list, null),
// translated to another vendor over real HTTP: a 400 in Anthropic's error shape naming the block's
// pointer, as Anthropic answers it ("tool_use.input: Input should be a valid dictionary") and as
// wire-vendor-a refuses arguments that are not text; the upstream is not called. It was sent on as
// the arguments "42" (a string JSON-encoded again), naming nothing. An object is translated as before.
import t from 'tap';
import { seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { post, routeLive } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => { await relay.close(); await up.close(); });

const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'history-chat', shapes: ['openai.chat'] });
await routeLive(relay, seeded);

/** A Messages request whose second turn is a tool_use with `input`, answered by a tool_result. */
const ask = (input: unknown) => post(`${relay.inferenceUrl}/vendor-b/v1/messages`, { 'x-api-key': seeded.relayKey, 'anthropic-version': '2023-06-01' }, {
  model: 'history-chat', max_tokens: 50,
  tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
  messages: [
    { role: 'user', content: 'Look it up.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' }] },
  ],
});

for (const [label, input] of [['a number', 42], ['a boolean', true], ['text', '{"q":"x"}'], ['a list', ['x']], ['null', null]] as const) {
  t.test(`an input that is ${label}: 400 at its pointer, the upstream not called`, async (t) => {
    const before = up.count;
    const res = await ask(input);
    t.equal(res.status, 400, res.status === 400 ? 'refused' : res.text.slice(0, 300));
    const body = JSON.parse(res.text);
    t.equal(body.type, 'error', "Anthropic's error shape");
    t.equal(body.error?.type, 'invalid_request_error', 'an invalid request');
    t.match(body.error?.message, '/messages/1/content/0/input', 'the message names the pointer');
    t.equal(up.count, before, 'the upstream was not called');
  });
}

t.test('an object input is translated as its JSON', async (t) => {
  const res = await ask({ q: 'x' });
  t.equal(res.status, 200, res.status === 200 ? 'answered' : res.text.slice(0, 300));
  const call = up.lastRequest()!.json.messages.find((m: { role: string }) => m.role === 'assistant').tool_calls[0];
  t.equal(call.function.arguments, '{"q":"x"}', 'the upstream got its JSON as the arguments');
});
