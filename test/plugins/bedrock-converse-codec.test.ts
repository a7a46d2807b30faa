// The Converse codec's rules the corpus does not reach (plugins/vendor-bedrock/codec): which
// stop sequence matched, tool_choice none, image URLs (refused), reasoning only for Claude, custom tools'
// streamed input, text blocks without a start event, and an answer without usage.
import t from 'tap';
import type { Route } from '../../core/plugin-api.ts';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import * as bedrock from '../../plugins/vendor-bedrock/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { converseSse } from '../translation/fixtures/responses.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { collect } from '../translation/harness.ts';

const base: CanonicalRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
const encode = (request: CanonicalRequest, model = 'anthropic.claude-sonnet-4-5') => bedrock.encodeRequest('bedrock.converse', request, fakeRoute(model)) as Record<string, any>;

t.test('stop sequences: Claude is asked which one matched, and it is read back', async (t) => {
  const body = encode({ ...base, stop: ['END', '  '] });
  t.same(body.inferenceConfig.stopSequences, ['END'], 'whitespace-only sequences are left out');
  t.same(body.additionalModelResponseFieldPaths, ['/stop_sequence']);
  t.notOk('additionalModelResponseFieldPaths' in encode({ ...base, stop: ['END'] }, 'meta.llama3-70b-instruct-v1:0'), 'not asked of other models');
  const response = bedrock.decodeResponse('bedrock.converse', {
    output: { message: { role: 'assistant', content: [{ text: 'a' }] } }, stopReason: 'stop_sequence',
    additionalModelResponseFields: { stop_sequence: 'END' }, usage: { inputTokens: 1, outputTokens: 1 },
  }, fakeRoute(), base);
  t.equal(response.stop_reason, 'stop_sequence');
  t.equal(response.stop_sequence, 'END');
});

t.test('tool_choice none: no tools; with tool blocks in the history the tools stay (named as dropped) and the model chooses', async (t) => {
  const dropped: string[] = [];
  const bare = bedrock.encodeRequest('bedrock.converse', { ...base, tools: [{ type: 'function', name: 'lookup' }], tool_choice: 'none' }, fakeRoute('anthropic.claude-sonnet-4-5'), dropped) as object;
  t.notOk('toolConfig' in bare);
  t.same(dropped, [], 'mapped, so not named');
  const history: CanonicalRequest['messages'] = [
    ...base.messages,
    { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'lookup', arguments: '{}' }] },
    { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] }] },
  ];
  const body = bedrock.encodeRequest('bedrock.converse', { ...base, messages: history, tools: [{ type: 'function', name: 'lookup' }], tool_choice: 'none' }, fakeRoute('anthropic.claude-sonnet-4-5'), dropped) as Record<string, any>;
  t.equal(body.toolConfig.tools[0].toolSpec.name, 'lookup');
  t.notOk('toolChoice' in body.toolConfig);
  t.same(dropped, ['tool_choice']);
  t.same(encode({ ...base, tools: [{ type: 'function', name: 'lookup' }], tool_choice: 'required' }).toolConfig.toolChoice, { any: {} });
});

t.test('images: bytes, data: URLs and S3 locations; an http URL is refused (400)', async (t) => {
  const content = encode({
    ...base,
    messages: [{
      role: 'user', content: [
        { type: 'image', source: { type: 'url', url: 'data:image/jpeg;base64,AAAA' } },
        { type: 'image', source: { type: 'url', url: 's3://bucket/cat.webp' } },
      ],
    }],
  }).messages[0].content;
  t.same(content, [
    { image: { format: 'jpeg', source: { bytes: 'AAAA' } } },
    { image: { format: 'webp', source: { s3Location: { uri: 's3://bucket/cat.webp' } } } },
  ]);
  const fetched: CanonicalRequest = { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } }] }] };
  t.throws(() => encode(fetched), { status: 400, code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /cannot take an image URL/ });
});

t.test('reasoning becomes Claude thinking, only for Claude models, never with a forced tool', async (t) => {
  const request: CanonicalRequest = { ...base, reasoning: { effort: 'low' }, temperature: 0.3 };
  const claude = encode(request);
  t.same(claude.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 4096 } });
  t.equal(claude.inferenceConfig.maxTokens, 8192, 'the budget plus room for the answer');
  t.notOk('temperature' in claude.inferenceConfig, 'no sampling change while thinking');
  const llama = encode(request, 'meta.llama3-70b-instruct-v1:0');
  t.notOk('additionalModelRequestFields' in llama);
  t.equal(llama.inferenceConfig.temperature, 0.3);
  const forced = encode({ ...request, tools: [{ type: 'function', name: 'lookup' }], tool_choice: { type: 'tool', name: 'lookup' } });
  t.notOk('additionalModelRequestFields' in forced);
});

t.test('a custom tool streamed in pieces arrives as its raw input', async (t) => {
  const request: CanonicalRequest = { ...base, tools: [{ type: 'custom', name: 'apply_patch' }] };
  const route = fakeRoute() as Route;
  const sse = converseSse([
    { event: 'messageStart', payload: { role: 'assistant' } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Editing.' } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { event: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'apply_patch' } } } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: '{"input":"*** Begin' } } } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: ' Patch"}' } } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 1 } },
    { event: 'messageStop', payload: { stopReason: 'tool_use' } },
  ]);
  const decoder = bedrock.streamDecoder('bedrock.converse', route, request);
  const events = sseFrames(sse).flatMap((f) => decoder.decode(f.event, f.data));
  events.push(...decoder.finish());
  const answer = collect(events);
  t.same(answer.content, [
    { type: 'text', text: 'Editing.' },
    { type: 'tool_call', id: 't1', name: 'apply_patch', arguments: '*** Begin Patch', tool_kind: 'custom' },
  ]);
  t.equal(answer.stop_reason, 'tool_use', 'no metadata event: the message still ends, without usage');
  t.equal(answer.usage.input_tokens, 0);
});

t.test('a toolUse delta whose input is an object (not Converse\'s text) arrives as its JSON; another value is named', async (t) => {
  const sse = converseSse([
    { event: 'messageStart', payload: { role: 'assistant' } },
    { event: 'contentBlockStart', payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'lookup' } } } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input: { q: 'x' } } } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { event: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't2', name: 'lookup' } } } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: 42 } } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 1 } },
    { event: 'messageStop', payload: { stopReason: 'tool_use' } },
  ]);
  const dropped: string[] = [];
  const decoder = bedrock.streamDecoder('bedrock.converse', fakeRoute() as Route, base, dropped);
  const events = sseFrames(sse).flatMap((f) => decoder.decode(f.event, f.data));
  const args = events.flatMap((e) => (e.type === 'delta' && e.delta.type === 'arguments' ? [e.delta.text] : []));
  t.same(args, ['{"q":"x"}'], 'text, never an object, in the arguments delta');
  t.same(collect([...events, ...decoder.finish()]).content.map((p) => p.type === 'tool_call' && p.arguments), ['{"q":"x"}', '']);
  t.same(dropped, ['toolUse.input']);
});

t.test('a whole answer\'s toolUse input: a string is the arguments text (never encoded again), an object its JSON, another value named', async (t) => {
  const dropped: string[] = [];
  const answer = (input: unknown) => ({ toolUse: { toolUseId: 't1', name: 'lookup', input } });
  const response = bedrock.decodeResponse('bedrock.converse', {
    output: { message: { role: 'assistant', content: [answer('{"q":"x"}'), answer({ q: 'x' }), answer(['a']), answer(undefined), answer(42)] } },
    stopReason: 'tool_use', usage: { inputTokens: 1, outputTokens: 1 },
  }, fakeRoute() as Route, base, dropped);
  t.same(response.content.map((p) => p.type === 'tool_call' && p.arguments), ['{"q":"x"}', '{"q":"x"}', '["a"]', '{}', '{}']);
  t.same(dropped, ['toolUse.input'], 'a number is named, as in a stream');
});
