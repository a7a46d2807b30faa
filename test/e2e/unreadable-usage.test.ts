// An upstream whose usage names a count Relay cannot read: a string ("500"), a negative, null or
// missing output count read as 0 and the answer was billed for its prompt alone, with nothing on
// the record to say so; 1e300 was clamped to MAX_TOKEN_COUNT and billed as two billion tokens
// ($21,474 at gpt-4o's rates), also unflagged. Such a part is now metered as an answer without
// usage is (unreported-usage.ts): the output from what Relay saw of the answer, the prompt by
// Relay's estimate; extras.usage_estimated and extras.usage_unreadable name the parts, and what
// was read stays as read. Passed through and translated, whole and streamed.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

/** 40 characters: 10 tokens at Relay's 4 characters a token. */
const ANSWER = 'This answer has forty characters in all.';
const ANSWER_TOKENS = 10;
/** A passed-through stream's output is estimated from a sample of its frames (output-frames.ts): within this. */
const SAMPLED_SLACK = 2;
/** gpt-4o in the shipped table: $2.50 in, $10 out per million. */
const priced = (input: number, output: number) => Math.round(input * 2.5 + output * 10) / 1e6;
/** Chat Completions only: no count endpoint, so an unreadable prompt is Relay's estimate. */
const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'unreadable-gpt', upstreamModel: 'gpt-4o', shapes: ['openai.chat'] });
await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.hostKeysOfHost(route.hostId).length > 0);

const CHAT = { path: '/vendor-a/v1/chat/completions', body: { model: 'unreadable-gpt', messages: [{ role: 'user', content: 'hi' }] } };
const MESSAGES = { path: '/vendor-b/v1/messages', body: { model: 'unreadable-gpt', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] } };

async function answered(usage: object, via = CHAT): Promise<any> {
  up.enqueue({ body: { ...openai.chatCompletion({ model: 'gpt-4o', text: ANSWER }), usage } }, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, via.path, route.relayKey, via.body);
  t.equal(res.status, 200);
  return usageRecord(relay, res.headers.get('x-request-id')!);
}

const UNREADABLE_OUTPUT: Array<[string, object]> = [
  ['a string', { prompt_tokens: 12, completion_tokens: '500' }],
  ['a negative', { prompt_tokens: 12, completion_tokens: -500 }],
  ['null', { prompt_tokens: 12, completion_tokens: null }],
  ['missing', { prompt_tokens: 12 }],
  ['1e300', { prompt_tokens: 12, completion_tokens: 1e300 }],
];

for (const [via, name] of [[CHAT, 'passed through'], [MESSAGES, 'translated to Messages']] as const) {
  for (const [what, usage] of UNREADABLE_OUTPUT) {
    t.test(`${name}: an output count that is ${what} is estimated from the answer, flagged`, async (t) => {
      const r = await answered(usage, via);
      t.match(r, { input_tokens: 12, output_tokens: ANSWER_TOKENS, cost: priced(12, ANSWER_TOKENS), currency: 'USD' }, 'the prompt as reported, the output as Relay saw it');
      t.equal(r.extras.usage_estimated, 'output');
      t.equal(r.extras.usage_unreadable, 'output');
    });
  }
}

t.test('a prompt count that cannot be read is Relay\'s estimate; the output as reported', async (t) => {
  for (const prompt of ['12', -12, 1e20]) {
    const r = await answered({ prompt_tokens: prompt, completion_tokens: 7 });
    t.match(r, { input_tokens: 1, output_tokens: 7, cost: priced(1, 7) }, `prompt_tokens ${JSON.stringify(prompt)}: "hi" estimates to 1 token`);
    t.equal(r.extras.usage_estimated, 'input');
    t.equal(r.extras.usage_unreadable, 'input');
  }
});

t.test('a streamed answer whose final usage chunk has an output count as a string', async (t) => {
  const frames = openai.chatChunks({ model: 'gpt-4o', text: ANSWER, chunks: 8, includeUsage: true, inputTokens: 12, outputTokens: 10 })
    .map((f) => f.replace('"completion_tokens":10', '"completion_tokens":"10"'));
  t.ok(frames.some((f) => f.includes('"completion_tokens":"10"')), 'the usage chunk carries the string');
  up.enqueueStream({ frames }, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, CHAT.path, route.relayKey, { ...CHAT.body, stream: true, stream_options: { include_usage: true } });
  t.equal(res.status, 200);
  const r = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(r.input_tokens, 12);
  t.ok(Math.abs(r.output_tokens - ANSWER_TOKENS) <= SAMPLED_SLACK, `${r.output_tokens} output tokens, about the answer's ${ANSWER_TOKENS}`);
  t.match(r.extras, { usage_estimated: 'output', usage_unreadable: 'output' });
});

t.test('readable usage is recorded as reported, unflagged; so is an answer with no output', async (t) => {
  const r = await answered({ prompt_tokens: 12, completion_tokens: 9 });
  t.match(r, { input_tokens: 12, output_tokens: 9, cost: priced(12, 9) });
  t.notOk(r.extras.usage_estimated);
  t.notOk(r.extras.usage_unreadable);
  const whole = openai.chatCompletion({ model: 'gpt-4o', text: ANSWER }) as { choices: Array<{ message: { content: string } }> };
  whole.choices[0]!.message.content = '';
  up.enqueue({ body: { ...whole, usage: { prompt_tokens: 12, completion_tokens: 0 } } }, { path: '/v1/chat/completions' });
  const empty = await usageRecord(relay, (await viaRelay(relay, CHAT.path, route.relayKey, CHAT.body)).headers.get('x-request-id')!);
  t.match(empty, { input_tokens: 12, output_tokens: 0 }, 'no text, no output: 0 is right');
  t.notOk(empty.extras.usage_unreadable);
});

t.test('/metrics counts them among the estimated answers, reason unreadable', async (t) => {
  const metrics = await (await fetch(`${relay.controlUrl}/metrics`, { headers: { authorization: `Bearer ${relay.adminToken}` } })).text();
  t.match(metrics, /relay_estimated_answers_total\{model="unreadable-gpt",reason="unreadable"\} \d+/);
});
