// The fake upstream itself: the official SDKs talk to it directly, and scripted faults happen.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  startFakeUpstream,
  faults,
  openai as oa,
  anthropic as an,
  parseSse,
  refusingUrl,
  type FakeUpstream,
} from './fake-upstream.ts';

let up: FakeUpstream;
t.before(async () => {
  up = await startFakeUpstream({ chunks: 4, text: 'one two three four five six' });
});
t.teardown(() => up.close());
t.beforeEach(() => up.reset());

const oai = () => new OpenAI({ apiKey: 'sk-upstream', baseURL: `${up.url}/v1`, maxRetries: 0 });
const ant = () => new Anthropic({ apiKey: 'sk-ant-upstream', baseURL: up.url, maxRetries: 0 });

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(up.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

t.test('openai chat completions, json and stream with usage', async (t) => {
  const c = await oai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(c.model, 'gpt-test');
  t.equal(c.object, 'chat.completion');
  t.equal(c.choices[0]!.message.content, 'one two three four five six');
  t.equal(c.choices[0]!.finish_reason, 'stop');
  t.same(c.usage && [c.usage.prompt_tokens, c.usage.completion_tokens, c.usage.total_tokens], [12, 4, 16]);

  const stream = await oai().chat.completions.create({
    model: 'gpt-stream',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const deltas: string[] = [];
  let usage: unknown;
  for await (const ch of stream) {
    t.equal(ch.model, 'gpt-stream');
    if (ch.choices[0]?.delta.content) deltas.push(ch.choices[0].delta.content);
    if (ch.usage) usage = ch.usage;
  }
  t.equal(deltas.length, 4);
  t.equal(deltas.join(''), 'one two three four five six');
  t.match(usage, { prompt_tokens: 12, completion_tokens: 4 });

  // Raw wire: data-only frames, final usage chunk with empty choices, then [DONE].
  const res = await post('/v1/chat/completions', { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [] });
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const frames = parseSse(await res.text());
  t.equal(frames.length, 1 + 4 + 1 + 1 + 1);
  t.ok(frames.every((f) => f.event === undefined));
  t.equal(frames.at(-1)!.data, '[DONE]');
  const last = JSON.parse(frames.at(-2)!.data);
  t.same(last.choices, []);
  t.equal(last.usage.total_tokens, 16);
  t.equal(JSON.parse(frames[1]!.data).usage, null);

  // Without include_usage: no usage key at all, no usage chunk.
  const res2 = await post('/v1/chat/completions', { model: 'm', stream: true, messages: [] });
  const f2 = parseSse(await res2.text());
  t.equal(f2.length, 1 + 4 + 1 + 1);
  t.notOk('usage' in JSON.parse(f2[0]!.data));
});

t.test('openai responses, json and stream', async (t) => {
  const r = await oai().responses.create({ model: 'gpt-resp', input: 'hi' });
  t.equal(r.model, 'gpt-resp');
  t.equal(r.status, 'completed');
  t.equal(r.output_text, 'one two three four five six');
  t.match(r.usage, { input_tokens: 12, output_tokens: 4, total_tokens: 16 });

  const s = oai().responses.stream({ model: 'gpt-resp-s', input: 'hi' });
  const types: string[] = [];
  const seqs: number[] = [];
  for await (const ev of s) {
    types.push(ev.type);
    seqs.push(ev.sequence_number);
  }
  const final = await s.finalResponse();
  t.equal(final.output_text, 'one two three four five six');
  t.same(types, [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  t.same(seqs, types.map((_, i) => i));

  // Raw wire: `event:` line names match the data's type.
  const res = await post('/v1/responses', { model: 'm', stream: true, input: 'x' });
  for (const f of parseSse(await res.text())) t.equal(f.event, JSON.parse(f.data).type);
});

t.test('openai embeddings, base64 (sdk default) and float', async (t) => {
  const e = await oai().embeddings.create({ model: 'emb-test', input: ['a', 'b'] });
  t.equal(e.model, 'emb-test');
  t.equal(e.data.length, 2);
  t.equal(e.data[0]!.embedding.length, 8);
  t.equal(typeof e.data[0]!.embedding[0], 'number');
  t.equal(up.lastRequest()!.json.encoding_format, 'base64');

  const res = await post('/v1/embeddings', { model: 'e', input: 'x', dimensions: 3, encoding_format: 'float' });
  const body = (await res.json()) as any;
  t.equal(body.object, 'list');
  t.equal(body.data[0].embedding.length, 3);
  t.same(body.usage, { prompt_tokens: 5, total_tokens: 5 });
});

t.test('anthropic messages, json, stream and count_tokens', async (t) => {
  const m = await ant().messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(m.model, 'claude-test');
  t.equal(m.stop_reason, 'end_turn');
  t.same(m.content, [{ type: 'text', text: 'one two three four five six' }]);
  t.match(m.usage, { input_tokens: 12, output_tokens: 4 });

  const s = ant().messages.stream({ model: 'claude-s', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
  const types: string[] = [];
  s.on('streamEvent', (ev) => types.push(ev.type));
  const final = await s.finalMessage();
  t.equal((final.content[0] as { text: string }).text, 'one two three four five six');
  t.equal(final.usage.output_tokens, 4);
  t.equal(final.model, 'claude-s');
  t.same(types, [
    'message_start',
    'content_block_start',
    'content_block_delta',
    'content_block_delta',
    'content_block_delta',
    'content_block_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);

  const res = await post('/v1/messages?beta=true', { model: 'c', max_tokens: 5, stream: true, messages: [] });
  const evs = parseSse(await res.text()).map((f) => f.event);
  t.same(evs.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
  t.equal(up.lastRequest()!.path, '/v1/messages?beta=true');
  t.equal(up.lastRequest()!.pathname, '/v1/messages');
  t.equal(up.lastRequest()!.query.get('beta'), 'true');

  const ct = await ant().messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] });
  t.same(ct, { input_tokens: 12 });
});

t.test('records requests and checks headers', async (t) => {
  up.expectHeader('authorization', 'Bearer sk-upstream');
  up.expectHeader('x-gw-api-key', undefined);
  await oai().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  t.same(up.violations, []);
  await post('/v1/chat/completions', { model: 'm', messages: [] }, { authorization: 'Bearer other', 'X-GW-API-Key': 'rk' });
  t.equal(up.violations.length, 2);
  t.equal(up.count, 2);
  const r = up.requests[0]!;
  t.equal(r.method, 'POST');
  t.equal(r.path, '/v1/chat/completions');
  t.ok(Buffer.isBuffer(r.body));
  t.same(r.json.messages, [{ role: 'user', content: 'hi' }]);
  t.ok(up.requests[1]!.rawHeaders.includes('X-GW-API-Key'));
  const waited = await up.waitForRequests(2, 100);
  t.equal(waited.length, 2);
  await t.rejects(up.waitForRequests(3, 50));
});

t.test('apiKey option answers the vendor 401', async (t) => {
  up.configure({ apiKey: 'sk-good' });
  t.teardown(() => up.configure({ apiKey: undefined }));
  const e = await oai().chat.completions.create({ model: 'm', messages: [] }).catch((e) => e);
  t.ok(e instanceof OpenAI.AuthenticationError);
  t.equal(e.code, 'invalid_api_key');
  const ok = await post('/v1/chat/completions', { model: 'm', messages: [] }, { authorization: 'Bearer sk-good' });
  t.equal(ok.status, 200);
  const a = await post('/v1/messages', { model: 'c', max_tokens: 1, messages: [] }, { 'x-api-key': 'sk-good' });
  t.equal(a.status, 200);
  const bad = await post('/v1/messages', { model: 'c', max_tokens: 1, messages: [] }, { 'x-api-key': 'sk-bad' });
  t.equal(bad.status, 401);
  t.match(await bad.json(), { type: 'error', error: { type: 'authentication_error' } });
});

t.test('429 with and without retry-after, 5xx, 401 bodies', async (t) => {
  up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 3 }));
  up.enqueue(faults.rateLimit({ vendor: 'openai' }));
  const e1 = await oai().chat.completions.create({ model: 'm', messages: [] }).catch((e) => e);
  t.ok(e1 instanceof OpenAI.RateLimitError);
  t.equal(e1.headers.get('retry-after'), '3');
  t.match(e1.message, /try again in 3s/);
  const r2 = await post('/v1/chat/completions', { model: 'm', messages: [] });
  t.equal(r2.status, 429);
  t.equal(r2.headers.get('retry-after'), null);
  t.equal(((await r2.json()) as any).error.code, 'rate_limit_exceeded');

  up.enqueue(faults.rateLimit({ vendor: 'anthropic', retryAfter: 1 }));
  const e3 = await ant().messages.create({ model: 'c', max_tokens: 5, messages: [] }).catch((e) => e);
  t.ok(e3 instanceof Anthropic.RateLimitError);
  t.equal(e3.error.error.type, 'rate_limit_error');

  up.enqueue(faults.serverError({ vendor: 'anthropic', status: 529 }));
  const e4 = await ant().messages.create({ model: 'c', max_tokens: 5, messages: [] }).catch((e) => e);
  t.equal(e4.status, 529);
  t.equal(e4.error.error.type, 'overloaded_error');

  up.enqueue(faults.serverError({ vendor: 'openai', status: 503 }), { times: 2 });
  t.equal((await post('/v1/responses', { model: 'm', input: 'x' })).status, 503);
  t.equal((await post('/v1/responses', { model: 'm', input: 'x' })).status, 503);
  t.equal((await post('/v1/responses', { model: 'm', input: 'x' })).status, 200);

  up.enqueue(faults.unauthorized({ vendor: 'anthropic' }));
  const e5 = await ant().messages.create({ model: 'c', max_tokens: 5, messages: [] }).catch((e) => e);
  t.ok(e5 instanceof Anthropic.AuthenticationError);
});

t.test('queue entries can be limited to a path; scripts see each request', async (t) => {
  up.enqueue({ status: 418, body: 'teapot' }, { path: '/v1/messages' });
  t.equal((await post('/v1/chat/completions', { model: 'm', messages: [] })).status, 200);
  t.equal((await post('/v1/messages', { model: 'm', max_tokens: 1, messages: [] })).status, 418);
  up.script((req) => (req.json?.model === 'fail-me' ? faults.serverError({ vendor: 'openai', status: 502 }) : undefined));
  t.equal((await post('/v1/chat/completions', { model: 'fail-me', messages: [] })).status, 502);
  t.equal((await post('/v1/chat/completions', { model: 'fine', messages: [] })).status, 200);
  up.script(async () => ({ kind: 'default' }));
  t.equal((await post('/v1/chat/completions', { model: 'x', messages: [] })).status, 200);
  t.equal((await post('/v1/nope', {})).status, 404);
  t.equal((await post('/v1/chat/completions', '{bad')).status, 400);
});

t.test('late headers, stalled body, reset mid-stream', async (t) => {
  up.enqueue({ status: 200, body: { ok: true }, headersDelayMs: 150 });
  let t0 = Date.now();
  const r = await post('/v1/chat/completions', {});
  t.ok(Date.now() - t0 >= 140, 'headers came late');
  t.same(await r.json(), { ok: true });

  // Stall: headers and half the body, then silence.
  up.enqueue({ status: 200, body: { ok: 'a long enough body' }, truncateAt: 5, then: 'stall' });
  const ac = new AbortController();
  const r2 = await post('/v1/chat/completions', {});
  t0 = Date.now();
  setTimeout(() => ac.abort(), 150);
  const reader = r2.body!.getReader();
  const first = await reader.read();
  t.equal(Buffer.from(first.value!).toString(), '{"ok"');
  const stalled = await Promise.race([reader.read().then(() => 'data'), new Promise((res) => setTimeout(() => res('stalled'), 150))]);
  t.equal(stalled, 'stalled');
  await reader.cancel();

  // Reset after 3 frames of a real chat stream.
  const frames = oa.chatChunks({ model: 'm', chunks: 10 });
  up.enqueueStream({ frames: frames.slice(0, 3), then: 'reset', delayMs: 10 });
  const stream = await oai().chat.completions.create({ model: 'm', messages: [], stream: true });
  let got = 0;
  const err = await (async () => {
    for await (const _ of stream) got++;
  })().catch((e) => e);
  t.equal(got, 3);
  t.ok(err instanceof Error, 'stream errored: ' + String(err));

  // FIN without the terminating chunk: a premature close, not a clean end.
  up.enqueueStream(faults.cutStream(frames, 2, 'close'));
  const r3 = await post('/v1/chat/completions', {});
  await t.rejects(r3.text());

  // Reset before any answer.
  up.enqueue({ kind: 'reset' });
  await t.rejects(post('/v1/chat/completions', {}));
});

t.test('malformed json and sse', async (t) => {
  up.enqueue(faults.malformedJson());
  const e = await oai().chat.completions.create({ model: 'm', messages: [] }).catch((e) => e);
  t.ok(e instanceof Error, 'sdk rejects bad json: ' + String(e));

  up.enqueueStream(faults.malformedSse());
  const s = await oai().chat.completions.create({ model: 'm', messages: [], stream: true });
  const e2 = await (async () => {
    for await (const _ of s);
  })().catch((e) => e);
  t.ok(e2 instanceof Error, 'sdk rejects bad frame: ' + String(e2));
});

t.test('responses failed/error and anthropic overloaded streams', async (t) => {
  up.enqueueStream(faults.responsesFailed({ model: 'gpt-x' }));
  const res = await post('/v1/responses', { model: 'gpt-x', stream: true, input: 'x' });
  const evs = parseSse(await res.text());
  t.same(evs.map((f) => f.event), ['response.created', 'response.in_progress', 'response.failed']);
  const failed = JSON.parse(evs[2]!.data);
  t.equal(failed.response.status, 'failed');
  t.equal(failed.response.error.code, 'rate_limit_exceeded');
  t.match(failed.response.error.message, /try again in 2s/);

  up.enqueueStream(faults.responsesFailed({ as: 'error', code: 'server_error', message: 'boom' }));
  const s = await oai().responses.create({ model: 'gpt-x', input: 'x', stream: true });
  const seen: string[] = [];
  const err = await (async () => {
    for await (const ev of s) seen.push(ev.type);
  })().catch((e) => e);
  t.ok(seen.includes('response.created'));
  t.ok(err instanceof Error || seen.includes('error'), 'error surfaced');

  up.enqueueStream(faults.anthropicStreamError());
  const as = ant().messages.stream({ model: 'c', max_tokens: 5, messages: [] });
  const e3 = await as.finalMessage().catch((e) => e);
  t.ok(e3 instanceof Anthropic.APIError, String(e3));
  t.match(String(e3.message), /overloaded_error|Overloaded/);
});

t.test('refusing address and close() with a stalled connection', async (t) => {
  const url = await refusingUrl();
  const e = await fetch(url + '/v1/chat/completions').catch((e) => e);
  t.equal(e.cause?.code, 'ECONNREFUSED');

  const other = await startFakeUpstream();
  other.enqueue({ kind: 'stall' });
  const pending = fetch(other.url + '/v1/chat/completions', { method: 'POST', body: '{}' }).catch((e) => e);
  await other.waitForRequests(1);
  const t0 = Date.now();
  await other.close();
  t.ok(Date.now() - t0 < 1000, 'close does not wait for stalled requests');
  t.ok((await pending) instanceof Error);
});

t.test('record option and builders', async (t) => {
  const fast = await startFakeUpstream({ record: 2 });
  t.teardown(() => fast.close());
  for (let i = 0; i < 5; i++) await fetch(fast.url + '/v1/embeddings', { method: 'POST', body: JSON.stringify({ model: 'e', input: 'x' }) });
  t.equal(fast.count, 5);
  t.equal(fast.requests.length, 2);
  t.equal(fast.requests[1]!.index, 4);
  t.equal(an.events({ model: 'c', chunks: 3 }).length, 3 + 3 + 3);
  t.equal(oa.responseEvents({ model: 'r', chunks: 20 }).length, 4 + 20 + 4);
});

t.test('tool-call answers in every shape', async (t) => {
  const toolCall = { name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } };
  up.configure({ toolCall });
  t.teardown(() => up.configure({ toolCall: undefined }));

  const c = await oai().chat.completions.create({ model: 'm', messages: [] });
  t.equal(c.choices[0]!.finish_reason, 'tool_calls');
  const call = c.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
  t.equal(call.function.name, 'get_weather');
  t.same(JSON.parse(call.function.arguments), toolCall.input);

  const cs = oai().chat.completions.stream({ model: 'm', messages: [] });
  const fc = await cs.finalChatCompletion();
  const scall = fc.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
  t.same(JSON.parse(scall.function.arguments), toolCall.input);
  t.equal(fc.choices[0]!.finish_reason, 'tool_calls');

  const rs = oai().responses.stream({ model: 'm', input: 'x' });
  const fr = await rs.finalResponse();
  t.match(fr.output[0], { type: 'function_call', name: 'get_weather' });
  t.same(JSON.parse((fr.output[0] as { arguments: string }).arguments), toolCall.input);

  const am = await ant().messages.stream({ model: 'c', max_tokens: 10, messages: [] }).finalMessage();
  t.equal(am.stop_reason, 'tool_use');
  t.match(am.content[0], { type: 'tool_use', name: 'get_weather', input: toolCall.input });
  const aj = await ant().messages.create({ model: 'c', max_tokens: 10, messages: [] });
  t.match(aj.content[0], { type: 'tool_use', input: toolCall.input });

  // A custom tool (apply_patch) carries a raw string.
  const raw = oa.responseEvents({ model: 'm', toolCall: { name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' } });
  const done = parseSse(raw.at(-1)!)[0]!;
  t.equal(JSON.parse(done.data).response.output[0].arguments, '*** Begin Patch\n*** End Patch');
});

t.test('default bodies satisfy OpenAI published schema', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { OPENAI_OPENAPI_PATH: ref } = await import('./openapi-schemas.ts');
  const YAML = (await import('yaml')).default;
  const Ajv2020 = (await import('ajv/dist/2020.js')).default as any;
  const doc = YAML.parse(readFileSync(ref, 'utf8'));
  // OpenAPI 3.0 leftovers in the document: `nullable: true` means "or null".
  const fix = (o: any): void => {
    if (!o || typeof o !== 'object') return;
    if (o.nullable === true) {
      if (o.type) {
        o.type = ([] as unknown[]).concat(o.type, 'null');
        if (o.enum) o.enum = [...o.enum, null];
      } else if (o.$ref) {
        o.anyOf = [{ $ref: o.$ref }, { type: 'null' }];
        delete o.$ref;
      }
      delete o.nullable;
    }
    for (const k of Object.keys(o)) fix(o[k]);
  };
  fix(doc.components.schemas);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'oa', components: doc.components });
  const check = (name: string, data: unknown) => {
    const v = ajv.getSchema('oa#/components/schemas/' + name);
    t.ok(v(data), `${name}: ${JSON.stringify(v.errors?.slice(0, 3))}`);
  };
  const eventSchema: Record<string, string> = {
    'response.created': 'ResponseCreatedEvent',
    'response.in_progress': 'ResponseInProgressEvent',
    'response.output_item.added': 'ResponseOutputItemAddedEvent',
    'response.content_part.added': 'ResponseContentPartAddedEvent',
    'response.output_text.delta': 'ResponseTextDeltaEvent',
    'response.output_text.done': 'ResponseTextDoneEvent',
    'response.content_part.done': 'ResponseContentPartDoneEvent',
    'response.output_item.done': 'ResponseOutputItemDoneEvent',
    'response.completed': 'ResponseCompletedEvent',
    'response.failed': 'ResponseFailedEvent',
    error: 'ResponseErrorEvent',
  };
  check('CreateChatCompletionResponse', oa.chatCompletion({ model: 'm' }));
  for (const f of oa.chatChunks({ model: 'm', chunks: 2, includeUsage: true })) {
    const d = parseSse(f)[0]!.data;
    if (d !== '[DONE]') check('CreateChatCompletionStreamResponse', JSON.parse(d));
  }
  check('Response', oa.response({ model: 'm' }));
  const streams = [
    oa.responseEvents({ model: 'm', chunks: 2 }),
    faults.responsesFailed().frames as string[],
    faults.responsesFailed({ as: 'error' }).frames as string[],
  ];
  for (const frames of streams) {
    for (const f of frames) {
      const d = JSON.parse(parseSse(f)[0]!.data);
      check(eventSchema[d.type]!, d);
    }
  }
  const tool = { name: 'f', input: { a: 1 } };
  check('CreateChatCompletionResponse', oa.chatCompletion({ model: 'm', toolCall: tool }));
  for (const f of oa.chatChunks({ model: 'm', chunks: 2, toolCall: tool })) {
    const d = parseSse(f)[0]!.data;
    if (d !== '[DONE]') check('CreateChatCompletionStreamResponse', JSON.parse(d));
  }
  eventSchema['response.function_call_arguments.delta'] = 'ResponseFunctionCallArgumentsDeltaEvent';
  eventSchema['response.function_call_arguments.done'] = 'ResponseFunctionCallArgumentsDoneEvent';
  for (const f of oa.responseEvents({ model: 'm', chunks: 3, toolCall: tool })) {
    const d = JSON.parse(parseSse(f)[0]!.data);
    check(eventSchema[d.type]!, d);
  }
  check('CreateEmbeddingResponse', oa.embeddings({ model: 'e', inputs: 2 }));
  check('ErrorResponse', oa.error('x', 'invalid_request_error', 'invalid_api_key'));
  check('ErrorResponse', faults.rateLimit({ vendor: 'openai' }).body);
});
