// Conformance of the translation layer, table-driven over every pair of shapes:
// requests (each inbound shape -> canonical -> each upstream shape, read back), responses and
// streams (each upstream shape -> canonical -> each inbound shape, validated and read back),
// errors, and what each pair drops (pinned below, together with the DROPPED tables).
import t from 'tap';
import type { CanonicalRequest, CanonicalResponse, ContentPart } from '../../core/plugin-api/canonical.ts';
import { CHAT_REQUEST_DROPPED, CHAT_RESPONSE_DROPPED, RESPONSES_REQUEST_DROPPED, RESPONSES_RESPONSE_DROPPED } from '../../plugins/wire-vendor-a/codec/index.ts';
import { MESSAGES_REQUEST_DROPPED, MESSAGES_RESPONSE_DROPPED } from '../../plugins/wire-vendor-b/codec/index.ts';
import { CANONICAL_DROPPED } from '../../plugins/wire-canonical/codec.ts';
import { CHAT_UPSTREAM_DROPPED, OPENAI_CHAT_RESPONSE_DROPPED, OPENAI_RESPONSE_DROPPED, RESPONSES_UPSTREAM_DROPPED } from '../../plugins/vendor-openai/codec/index.ts';
import { ANTHROPIC_RESPONSE_DROPPED, MESSAGES_UPSTREAM_DROPPED } from '../../plugins/vendor-anthropic/codec/index.ts';
import { CONVERSE_REQUEST_DROPPED, CONVERSE_RESPONSE_DROPPED } from '../../plugins/vendor-bedrock/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { openapiProblems } from '../support/openapi-schemas.ts';
import { sseFrames } from '../support/sse-frames.ts';
import {
  INBOUND, INBOUND_SHAPES, canonicalProblems, collect, context, decodeStream, encodeStream, readBackRequest, readBackResponse, readBackStream,
  responseProblems, responseSemantics, streamProblems, vendorFor, type InboundShape, type UpstreamShape,
} from './harness.ts';
import { REQUEST_FIXTURES } from './fixtures/requests.ts';
import { ANSWER, CALLS, FIXTURE_USAGE, RATE_LIMIT_MESSAGE, STREAM_FIXTURES, THOUGHT } from './fixtures/responses.ts';
import { ANTHROPIC_SEARCH_ANSWER, ANTHROPIC_SEARCH_STREAM, CITED, OPENAI_SEARCH_ANSWER, OPENAI_SEARCH_STREAM, SEARCH_QUERY, SEARCH_URL } from './fixtures/web-search.ts';
import { lostFeatures } from './request-probes.ts';
import { UPSTREAM_CASES } from './upstream-cases.ts';

// ------------------------------------------------------------------ requests

/**
 * Features of a request each inbound -> upstream pair loses (request probes, request-probes.ts),
 * once what the upstream refuses is taken out (refusedBy). Each loss is named in x-relay-dropped
 * or has no effect on the answer (drop-names.test.ts pins which).
 */
const REQUEST_DROPS: Record<`${InboundShape} -> ${UpstreamShape}`, string[]> = {
  'openai.chat -> openai.chat': ['metadata'],
  'openai.chat -> openai.responses': [],
  'openai.chat -> anthropic.messages': [
    'image detail', 'metadata', 'response format name and strict', 'system message position', 'system prompt parts', 'temperature', 'top_p',
  ],
  'openai.responses -> openai.chat': ['custom tools', 'metadata', 'reasoning history', 'reasoning summary'],
  'openai.responses -> openai.responses': [],
  'openai.responses -> anthropic.messages': [
    'custom tools', 'image detail', 'metadata', 'reasoning history', 'reasoning summary', 'response format name and strict',
    'system message position', 'system prompt parts', 'temperature', 'top_p',
  ],
  'anthropic.messages -> openai.chat': ['reasoning budget', 'reasoning history'],
  'anthropic.messages -> openai.responses': ['reasoning budget', 'reasoning history'],
  'anthropic.messages -> anthropic.messages': ['system message position', 'system prompt parts', 'temperature'],
  'canonical -> openai.chat': ['custom tools', 'metadata', 'reasoning history', 'reasoning summary'],
  'canonical -> openai.responses': ['reasoning history'],
  'canonical -> anthropic.messages': [
    'custom tools', 'image detail', 'metadata', 'reasoning history', 'reasoning summary', 'response format name and strict',
    'system message position', 'system prompt parts', 'temperature', 'top_p',
  ],
  // Converse: CONVERSE_REQUEST_DROPPED says why. An image URL (the Responses kitchen sink's) is
  // refused: Converse cannot fetch it.
  'openai.chat -> bedrock.converse': [
    'image detail', 'response format name and strict', 'system message position', 'system prompt parts', 'temperature', 'top_p',
  ],
  'openai.responses -> bedrock.converse': [
    'custom tools', 'reasoning history', 'reasoning summary', 'response format name and strict',
    'system message position', 'system prompt parts', 'temperature', 'top_p',
  ],
  'anthropic.messages -> bedrock.converse': ['reasoning history', 'system message position', 'system prompt parts', 'temperature'],
  'canonical -> bedrock.converse': [
    'custom tools', 'image detail', 'reasoning history', 'reasoning summary', 'response format name and strict',
    'system message position', 'system prompt parts', 'temperature', 'top_p',
  ],
};

/** Why an upstream refuses a request (a 400 naming it), or null: stop sequences Responses cannot take, image URLs Converse cannot fetch. */
function refusedBy(upstream: UpstreamShape, request: CanonicalRequest): RegExp | null {
  if (upstream === 'openai.responses' && (request.stop?.length ?? 0) > 0) return /`stop`.*no stop sequences/;
  if (upstream === 'bedrock.converse' && request.messages.some((m) => m.content.some((p) => p.type === 'image' && p.source.type === 'url' && !/^(data:|s3:)/.test(p.source.url)))) {
    return /an image URL/;
  }
  return null;
}

/** The request without what `upstream` refuses, to check the rest of it. */
function withoutRefused(upstream: UpstreamShape, request: CanonicalRequest): CanonicalRequest {
  if (upstream === 'openai.responses') return { ...request, stop: undefined };
  const fetched = (p: ContentPart) => p.type === 'image' && p.source.type === 'url' && !/^(data:|s3:)/.test(p.source.url);
  return { ...request, messages: request.messages.map((m) => ({ ...m, content: m.content.filter((p) => !fetched(p)) })) };
}

function upstreamRequestProblems(shape: UpstreamShape, body: unknown): string[] {
  if (shape === 'openai.chat') return openapiProblems('CreateChatCompletionRequest', body);
  if (shape === 'openai.responses') return openapiProblems('CreateResponse', body);
  return [];
}

t.test('requests: every inbound shape through every upstream shape', async (t) => {
  for (const inbound of INBOUND_SHAPES) {
    for (const fixture of REQUEST_FIXTURES[inbound]) {
      const request = INBOUND[inbound].decodeRequest(fixture.body);
      t.same(canonicalProblems('request', request), [], `${inbound} [${fixture.name}] decodes to a valid canonical request`);
      for (const { label, shape: upstream, vendor } of UPSTREAM_CASES) {
        const pair = `${inbound} -> ${upstream}` as const;
        const named = `${inbound} -> ${label}`;
        // Bedrock's corpus model is a Claude one, whose thinking Converse carries.
        const route = fakeRoute(upstream === 'bedrock.converse' ? 'anthropic.claude-sonnet-4-5' : 'upstream-model');
        // What the upstream cannot honour is refused (a 400 naming it); the rest is checked without it.
        const refusal = refusedBy(upstream, request);
        if (refusal) t.throws(() => vendor.encodeRequest(upstream, request, route), { status: 400, message: refusal }, `${named} [${fixture.name}] is refused, naming why`);
        const sent = refusal ? withoutRefused(upstream, request) : request;
        const body = vendor.encodeRequest(upstream, sent, route);
        // Converse names the model in the URL (the adapter's), never in the body.
        if (upstream === 'bedrock.converse') t.notOk('model' in (body as object), `${named} [${fixture.name}] has no model in the body`);
        else t.equal((body as { model: string }).model, 'upstream-model', `${named} [${fixture.name}] uses the route's upstream model`);
        t.same(upstreamRequestProblems(upstream, body), [], `${named} [${fixture.name}] request matches the OpenAPI description`);
        const back = readBackRequest(upstream, body);
        const lost = lostFeatures(sent, back);
        if (fixture.name === 'kitchen sink') t.same(lost, REQUEST_DROPS[pair], `${named} drops exactly what the table says`);
        else t.same(lost.filter((f) => !REQUEST_DROPS[pair].includes(f)), [], `${named} [${fixture.name}] drops nothing outside the table`);
      }
    }
  }
});

t.test('requests: the kitchen sink keeps the essentials on every pair', async (t) => {
  for (const inbound of INBOUND_SHAPES) {
    const decoded = INBOUND[inbound].decodeRequest(REQUEST_FIXTURES[inbound][0].body);
    for (const { label, shape: upstream, vendor } of UPSTREAM_CASES) {
      const request = refusedBy(upstream, decoded) ? withoutRefused(upstream, decoded) : decoded;
      const back = readBackRequest(upstream, vendor.encodeRequest(upstream, request, fakeRoute('anthropic.claude-sonnet-4-5')));
      const pair = `${inbound} -> ${label}`;
      t.match(back.system?.map((p) => p.text).join('\n'), /You are terse\./, `${pair}: system prompt`);
      // Converse takes no image URL: the Responses kitchen sink, whose only image is one, is refused (checked above).
      const urlOnly = upstream === 'bedrock.converse' && !decoded.messages.some((m) => m.content.some((p) => p.type === 'image' && p.source.type === 'base64'));
      t.ok(urlOnly || back.messages.some((m) => m.content.some((p) => p.type === 'image')), `${pair}: image`);
      t.ok(back.messages.some((m) => m.content.some((p) => p.type === 'tool_result')), `${pair}: tool results`);
      t.ok(back.tools?.some((tool) => 'name' in tool && tool.name === 'lookup'), `${pair}: function tool`);
      t.ok(back.reasoning?.effort, `${pair}: reasoning effort`);
      t.equal(back.response_format?.type, 'json_schema', `${pair}: structured output`);
      t.equal(back.max_output_tokens, 40000, `${pair}: max output tokens`);
    }
  }
});

t.test('requests: invalid input is a 400 naming the field, never a TypeError', async (t) => {
  const cases: Array<[InboundShape, unknown, string]> = [
    ['openai.chat', { model: 'm' }, '/messages'],
    ['openai.chat', { model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] }, '/messages/0/content/0/text'],
    ['openai.chat', { model: 'm', messages: [{ role: 'wizard', content: 'x' }] }, '/messages/0/role'],
    ['openai.chat', { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, '/temperature'],
    ['openai.chat', { model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'extreme' }, '/reasoning_effort'],
    ['openai.responses', { model: 'm', input: [{ type: 'function_call', name: 'x', call_id: 'c' }] }, '/input/0/arguments'],
    ['openai.responses', { input: 'hi' }, '/model'],
    ['openai.responses', { model: 'm', input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function' }] }] }, '/tools/0/tools/0/name'],
    ['anthropic.messages', { model: 'm', messages: [] }, '/max_tokens'],
    ['anthropic.messages', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }, '/messages/0/content/0/tool_use_id'],
    ['anthropic.messages', { model: 'm', max_tokens: 5, messages: [], thinking: { type: 'enabled' } }, '/thinking'],
    ['canonical', { model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] }, '/messages/0/content/0'],
    ['canonical', null, '/'],
  ];
  for (const [shape, body, field] of cases) {
    try {
      INBOUND[shape].decodeRequest(body);
      t.fail(`${shape} accepted ${JSON.stringify(body)}`);
    } catch (err) {
      const e = err as { code?: string; field?: string; status?: number };
      t.equal(e.code, 'RELAY_ERR_BAD_REQUEST', `${shape} ${field}: code`);
      t.equal(e.status, 400);
      t.ok(e.field?.startsWith(field), `${shape}: field ${String(e.field)} starts with ${field}`);
    }
  }
  t.doesNotThrow(() => INBOUND['anthropic.messages'].decodeRequest({ model: 'm', max_tokens: 5, messages: [{ role: 'system', content: 'be nice' }, { role: 'user', content: 'hi' }] }),
    'a system message inside Anthropic messages is accepted');
});

// ------------------------------------------------------------------ responses

const TOOLS_REQUEST: CanonicalRequest = {
  model: 'client-model',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Look up cats and dogs' }] }],
  tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
};
const CHAT_INBOUND_WITH_USAGE = { stream_options: { include_usage: true } };

/** What a client of each inbound shape gets back of the fixture answer. */
function expectedSemantics(upstream: UpstreamShape, inbound: InboundShape) {
  const noReasoning = inbound === 'openai.chat' || upstream === 'openai.chat';
  const usage = inbound === 'openai.chat' ? FIXTURE_USAGE[upstream].replace(/written=\d+/, 'written=0') : FIXTURE_USAGE[upstream];
  return { text: ANSWER, refusal: '', reasoning: noReasoning ? '' : THOUGHT, calls: CALLS, stop: 'tool_use', usage };
}

t.test('responses: each upstream shape decodes to canonical', async (t) => {
  for (const { label, shape: upstream, vendor, response: fixture } of UPSTREAM_CASES) {
    const response = vendor.decodeResponse(upstream, fixture, fakeRoute());
    t.same(canonicalProblems('response', response), [], `${label}: a valid canonical response`);
    t.same(responseSemantics(response), expectedSemantics(upstream, 'canonical'), `${label}: content, calls, stop reason and usage`);
    t.same(vendor.usageFromBody(upstream, fixture), response.usage, `${label}: usageFromBody`);
  }
});

t.test('responses: every upstream shape to every inbound shape', async (t) => {
  for (const { label, shape: upstream, vendor, response: fixture } of UPSTREAM_CASES) {
    const response = vendor.decodeResponse(upstream, fixture, fakeRoute());
    for (const inbound of INBOUND_SHAPES) {
      const pair = `${label} -> ${inbound}`;
      const body = INBOUND[inbound].encodeResponse(response, context(TOOLS_REQUEST));
      t.same(responseProblems(inbound, body), [], `${pair}: valid in the client's shape`);
      t.same(responseSemantics(readBackResponse(inbound, body)), expectedSemantics(upstream, inbound), `${pair}: same answer`);
    }
  }
});

t.test('responses: refusals and max tokens', async (t) => {
  const refusal = vendorFor('openai.chat').decodeResponse('openai.chat', {
    id: 'c', object: 'chat.completion', created: 1, model: 'gpt-up',
    choices: [{ index: 0, logprobs: null, finish_reason: 'stop', message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  }, fakeRoute());
  t.equal(refusal.stop_reason, 'refusal');
  for (const inbound of INBOUND_SHAPES) {
    const body = INBOUND[inbound].encodeResponse(refusal, context(TOOLS_REQUEST));
    t.same(responseProblems(inbound, body), [], `refusal -> ${inbound}: valid`);
    const back = responseSemantics(readBackResponse(inbound, body));
    t.equal(back.stop, 'refusal', `refusal -> ${inbound}: stop reason`);
    // Anthropic has no refusal block: the text arrives as text (MESSAGES_RESPONSE_DROPPED).
    t.equal(inbound === 'anthropic.messages' ? back.text : back.refusal, 'I cannot help with that.', `refusal -> ${inbound}: text`);
  }
  const truncated = vendorFor('anthropic.messages').decodeResponse('anthropic.messages', {
    id: 'm', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'text', text: 'Once upon' }], stop_reason: 'max_tokens', stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 2 },
  }, fakeRoute());
  for (const inbound of INBOUND_SHAPES) {
    const body = INBOUND[inbound].encodeResponse(truncated, context(TOOLS_REQUEST));
    t.same(responseProblems(inbound, body), [], `max_tokens -> ${inbound}: valid`);
    t.equal(readBackResponse(inbound, body).stop_reason, 'max_tokens', `max_tokens -> ${inbound}: stop reason`);
  }
  const stopped = vendorFor('anthropic.messages').decodeResponse('anthropic.messages', {
    id: 'm', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'text', text: 'a' }], stop_reason: 'stop_sequence', stop_sequence: 'END',
    usage: { input_tokens: 3, output_tokens: 2 },
  }, fakeRoute());
  t.equal(stopped.stop_sequence, 'END');
  t.equal((INBOUND['anthropic.messages'].encodeResponse(stopped, context(TOOLS_REQUEST)) as { stop_sequence: string }).stop_sequence, 'END');
});

// ------------------------------------------------------------------ streams

t.test('streams: each upstream shape decodes to valid canonical events', async (t) => {
  for (const { label, shape: upstream, vendor, stream } of UPSTREAM_CASES) {
    const events = decodeStream(upstream, stream, fakeRoute(), undefined, vendor);
    for (const event of events) t.same(canonicalProblems('event', event), [], `${label}: ${event.type} is a canonical event`);
    t.equal(events[0].type, 'start', `${label}: starts with start`);
    t.ok(events[0].type === 'start' && events[0].id !== '', `${label}: the start event carries the response id`);
    t.equal(events.at(-1)?.type, 'end', `${label}: ends with end`);
  }
});

t.test('streams: every upstream shape to every inbound shape', async (t) => {
  for (const { label, shape: upstream, vendor, stream } of UPSTREAM_CASES) {
    const events = decodeStream(upstream, stream, fakeRoute(), undefined, vendor);
    for (const inbound of INBOUND_SHAPES) {
      const pair = `${label} -> ${inbound}`;
      const sse = encodeStream(inbound, context(TOOLS_REQUEST, inbound === 'openai.chat' ? CHAT_INBOUND_WITH_USAGE : {}), events);
      t.same(await streamProblems(inbound, sse), [], `${pair}: a valid stream in the client's shape`);
      t.same(responseSemantics(readBackStream(inbound, sse)), expectedSemantics(upstream, inbound), `${pair}: same answer as the non-streamed response`);
    }
  }
});

t.test('streams: Chat usage chunk only when the client asked for it', async (t) => {
  const events = decodeStream('openai.chat', STREAM_FIXTURES['openai.chat']);
  const without = sseFrames(encodeStream('openai.chat', context(TOOLS_REQUEST, {}), events));
  t.notOk(without.some((f) => f.data !== '[DONE]' && 'usage' in JSON.parse(f.data)), 'no usage without include_usage');
  const withUsage = sseFrames(encodeStream('openai.chat', context(TOOLS_REQUEST, CHAT_INBOUND_WITH_USAGE), events));
  const usageChunk = JSON.parse(withUsage.at(-2)!.data) as { choices: unknown[]; usage: { prompt_tokens: number } };
  t.same(usageChunk.choices, []);
  t.equal(usageChunk.usage.prompt_tokens, 100);
  t.equal(withUsage.at(-1)!.data, '[DONE]');
  const first = JSON.parse(withUsage[0].data) as { choices: Array<{ delta: { role?: string } }> };
  t.equal(first.choices[0].delta.role, 'assistant', 'the first chunk carries the role');
});

t.test('streams: an upstream error after the opening frames reaches every client shape', async (t) => {
  for (const { label, shape: upstream, vendor, errorStream } of UPSTREAM_CASES) {
    const events = decodeStream(upstream, errorStream, fakeRoute(), undefined, vendor);
    const error = events.at(-1);
    t.equal(error?.type, 'error', `${label}: ends with an error event`);
    if (error?.type !== 'error') continue;
    t.equal(error.error.code, 'RELAY_ERR_UPSTREAM_RATE_LIMITED', `${label}: the upstream's rate limit`);
    t.equal(error.error.message, RATE_LIMIT_MESSAGE, `${label}: the upstream's words`);
    for (const inbound of INBOUND_SHAPES) {
      const sse = encodeStream(inbound, context(TOOLS_REQUEST), events);
      t.same(await streamProblems(inbound, sse), [], `${label} -> ${inbound}: valid`);
      t.match(sse, /try again in 2s/, `${label} -> ${inbound}: the message survives`);
    }
    const responses = sseFrames(encodeStream('openai.responses', context(TOOLS_REQUEST), events));
    const failed = JSON.parse(responses.at(-1)!.data) as { type: string; response: { error: { code: string } } };
    t.equal(failed.type, 'response.failed');
    t.equal(failed.response.error.code, 'rate_limit_exceeded', 'Codex reads rate_limit_exceeded inside response.failed');
  }
});

t.test('streams: an upstream that stops early ends the client stream with an error', async (t) => {
  for (const { label, shape: upstream, vendor, stream } of UPSTREAM_CASES) {
    const cut = stream.split('\n\n').slice(0, 4).join('\n\n') + '\n\n';
    const events = decodeStream(upstream, cut, fakeRoute(), undefined, vendor);
    t.equal(events.at(-1)?.type, 'error', `${label}: error at the end`);
    for (const inbound of INBOUND_SHAPES) t.same(await streamProblems(inbound, encodeStream(inbound, context(TOOLS_REQUEST), events)), [], `${label} -> ${inbound}`);
  }
});

// ------------------------------------------------------------------ inspectors

t.test('stream inspectors classify frames and read usage', async (t) => {
  for (const { label, shape: upstream, vendor, stream, errorStream, openingFrames } of UPSTREAM_CASES) {
    const inspector = vendor.streamInspector(upstream);
    const kinds = sseFrames(stream).map((f) => inspector.inspect(f.event, f.data));
    const firstOutput = kinds.indexOf('output');
    t.equal(firstOutput, openingFrames, `${label}: opening frames come first`);
    t.ok(kinds.slice(firstOutput).every((k) => k === 'output'), `${label}: then output`);
    const usage = inspector.usage();
    t.equal(usage?.input_tokens, 100, `${label}: usage input`);
    t.equal(usage?.output_tokens, 20, `${label}: usage output`);
    t.equal(usage?.cache_read_tokens, 40, `${label}: cached`);
    const errors = vendor.streamInspector(upstream);
    const errorFrames = sseFrames(errorStream);
    const errorKinds = errorFrames.map((f) => errors.inspect(f.event, f.data));
    t.same(errorKinds, [...Array<string>(errorFrames.length - 1).fill('opening'), 'error'], `${label}: error frames`);
  }
});

// ------------------------------------------------------------------ errors

t.test('upstream errors map by status and keep the upstream message', async (t) => {
  const bodies: Record<UpstreamShape, (message: string) => string> = {
    'openai.chat': (m) => JSON.stringify({ error: { message: m, type: 'invalid_request_error', param: 'messages', code: null } }),
    'openai.responses': (m) => JSON.stringify({ error: { message: m, type: 'invalid_request_error', param: null, code: null } }),
    'anthropic.messages': (m) => JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: m } }),
    'bedrock.converse': (m) => JSON.stringify({ message: m }),
  };
  const table: Array<[number, string, number]> = [
    [400, 'RELAY_ERR_BAD_REQUEST', 400],
    [401, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', 502],
    [403, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', 502],
    [404, 'RELAY_ERR_NOT_FOUND', 404],
    [413, 'RELAY_ERR_BODY_TOO_LARGE', 413],
    [422, 'RELAY_ERR_BAD_REQUEST', 400],
    [429, 'RELAY_ERR_UPSTREAM_RATE_LIMITED', 429],
    [500, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', 502],
    [502, 'RELAY_ERR_UPSTREAM_UNREACHABLE', 502],
    [503, 'RELAY_ERR_UPSTREAM_UNREACHABLE', 502],
    [504, 'RELAY_ERR_UPSTREAM_TIMEOUT', 502],
    [529, 'RELAY_ERR_UPSTREAM_UNREACHABLE', 502],
  ];
  for (const { label, shape: upstream, vendor } of UPSTREAM_CASES) {
    for (const [status, code, relayStatus] of table) {
      const error = vendor.decodeError(upstream, status, bodies[upstream](`upstream says ${status}`));
      t.equal(error.code, code, `${label} ${status} -> ${code}`);
      t.equal(error.status, relayStatus);
      t.equal(error.message, `upstream says ${status}`, `${label} ${status}: message kept`);
    }
    t.equal(vendor.decodeError(upstream, 502, '<html>Bad Gateway</html>').message, '<html>Bad Gateway</html>', `${label}: non-JSON body kept as text`);
    t.equal(vendor.decodeError(upstream, 500, '').message, 'the upstream answered HTTP 500', `${label}: empty body`);
  }
});

t.test('errors render in each client shape', async (t) => {
  const error = { code: 'RELAY_ERR_RATE_LIMITED' as const, type: 'rate_limit' as const, status: 429, message: 'slow down', field: '/model' };
  for (const shape of ['openai.chat', 'openai.responses'] as const) {
    const rendered = INBOUND[shape].renderError(error);
    t.equal(rendered.status, 429);
    t.same(openapiProblems('ErrorResponse', rendered.body), [], `${shape}: OpenAI error body`);
    t.same(rendered.body, { error: { message: 'slow down', type: 'rate_limit_error', param: '/model', code: 'RELAY_ERR_RATE_LIMITED' } });
  }
  t.same(INBOUND['anthropic.messages'].renderError(error), { status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } });
  const canonicalBody = INBOUND.canonical.renderError(error);
  t.same(canonicalBody.body, { error: { type: 'rate_limit', code: 'RELAY_ERR_RATE_LIMITED', message: 'slow down', status: 429, field: '/model' } });
});

// ------------------------------------------------------------------ drop tables

t.test('every codec documents what it drops', async (t) => {
  const tables = {
    CHAT_REQUEST_DROPPED, CHAT_RESPONSE_DROPPED, RESPONSES_REQUEST_DROPPED, RESPONSES_RESPONSE_DROPPED,
    MESSAGES_REQUEST_DROPPED, MESSAGES_RESPONSE_DROPPED, CHAT_UPSTREAM_DROPPED, RESPONSES_UPSTREAM_DROPPED, MESSAGES_UPSTREAM_DROPPED,
    CONVERSE_REQUEST_DROPPED, CONVERSE_RESPONSE_DROPPED, ANTHROPIC_RESPONSE_DROPPED, OPENAI_RESPONSE_DROPPED, OPENAI_CHAT_RESPONSE_DROPPED,
  };
  for (const [name, table] of Object.entries(tables)) {
    t.ok(Object.keys(table).length > 0, `${name} lists its drops`);
    for (const [field, rule] of Object.entries(table)) t.ok(typeof rule === 'string' && rule.length > 5, `${name}.${field} says why`);
  }
  t.same(CANONICAL_DROPPED, {}, 'the canonical shape drops nothing');
  // The pairs' drop lists (REQUEST_DROPS) are what the codecs' tables explain:
  t.match(Object.keys(RESPONSES_UPSTREAM_DROPPED).join(' '), /stop/, 'Responses has no stop sequences');
  t.match(Object.keys(CHAT_UPSTREAM_DROPPED).join(' '), /metadata/, 'Chat upstream drops metadata');
  t.match(Object.keys(MESSAGES_UPSTREAM_DROPPED).join(' '), /temperature/, 'Anthropic drops sampling while thinking');
});

// ------------------------------------------------------------------ Azure's content filter

t.test("Azure's content filter becomes a refusal naming the categories, in every client shape", async (t) => {
  const azure = UPSTREAM_CASES.find((c) => c.label === 'azure-openai openai.chat')!.vendor;
  const filtered = { filtered: true, severity: 'high' };
  const body = {
    id: 'chatcmpl-f', object: 'chat.completion', created: 1, model: 'gpt-4o',
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }],
    choices: [{ index: 0, finish_reason: 'content_filter', message: { role: 'assistant', content: null }, content_filter_results: { violence: filtered } }],
    usage: { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 },
  };
  const response = azure.decodeResponse('openai.chat', body, fakeRoute());
  t.equal(response.stop_reason, 'content_filter');
  t.match(responseSemantics(response).refusal, /content filter: violence \(high\)/, 'the refusal names the category');
  const sse = [
    { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: body.prompt_filter_results },
    { id: 'chatcmpl-f', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { role: 'assistant', content: 'Here is how to' } }] },
    { id: 'chatcmpl-f', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', content_filter_results: { violence: filtered } }] },
  ].map((d) => `data: ${JSON.stringify(d)}\n\n`).join('') + 'data: [DONE]\n\n';
  const events = decodeStream('openai.chat', sse, fakeRoute(), undefined, azure);
  for (const event of events) t.same(canonicalProblems('event', event), [], `${event.type} is a canonical event`);
  for (const inbound of INBOUND_SHAPES) {
    const rendered = INBOUND[inbound].encodeResponse(response, context(TOOLS_REQUEST));
    t.same(responseProblems(inbound, rendered), [], `filtered -> ${inbound}: valid`);
    const back = responseSemantics(readBackResponse(inbound, rendered));
    t.match(`${back.text}${back.refusal}`, /violence/, `filtered -> ${inbound}: the client reads why`);
    const stream = encodeStream(inbound, context(TOOLS_REQUEST), events);
    t.same(await streamProblems(inbound, stream), [], `filtered stream -> ${inbound}: valid`);
    const streamed = responseSemantics(readBackStream(inbound, stream));
    t.match(`${streamed.text}${streamed.refusal}`, /Here is how to[^]*violence/, `filtered stream -> ${inbound}: the text so far, then why it stopped`);
    if (inbound === 'anthropic.messages') t.equal(streamed.stop, 'refusal', 'Anthropic clients read stop_reason refusal');
  }
  const promptFiltered = JSON.stringify({ error: {
    message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", type: null, param: 'prompt', code: 'content_filter', status: 400,
    innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: true, severity: 'medium' } } },
  } });
  const error = azure.decodeError('openai.chat', 400, promptFiltered);
  t.equal(error.code, 'RELAY_ERR_BAD_REQUEST');
  t.match(error.message, /content management policy.*filtered: self_harm \(medium\)/, 'a filtered prompt names the category');
});

// ------------------------------------------------------------------ web search

const SEARCH_REQUEST: CanonicalRequest = { model: 'client-model', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is Relay?' }] }], tools: [{ type: 'web_search' }] };
const SEARCH_CASES = [
  { upstream: 'anthropic.messages' as UpstreamShape, body: ANTHROPIC_SEARCH_ANSWER, stream: ANTHROPIC_SEARCH_STREAM },
  { upstream: 'openai.responses' as UpstreamShape, body: OPENAI_SEARCH_ANSWER, stream: OPENAI_SEARCH_STREAM },
];

/** What every client reads of a search answer: the text, the search (Chat has no item for it), the cited URL. */
function searchSemantics(r: CanonicalResponse): { text: string; searches: string[]; cited: string[] } {
  return {
    // Chat sets text parts apart by a blank line.
    text: r.content.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('').replace(/\s+/g, ' '),
    searches: r.content.filter((p) => p.type === 'web_search_call').map((p) => `${(p as { query?: string }).query}:${((p as { sources?: Array<{ url: string }> }).sources ?? []).map((s) => s.url).join(',')}`),
    cited: r.content.flatMap((p) => (p.type === 'text' ? (p.citations ?? []).map((c) => c.url) : [])),
  };
}
const SEARCHED = { text: `Searching. ${CITED}`, searches: [`${SEARCH_QUERY}:${SEARCH_URL}`], cited: [SEARCH_URL] };

t.test('web search answers: each searching upstream to every inbound shape, whole and streamed', async (t) => {
  for (const { upstream, body, stream } of SEARCH_CASES) {
    const response = vendorFor(upstream).decodeResponse(upstream, body, fakeRoute(), SEARCH_REQUEST);
    t.same(canonicalProblems('response', response), [], `${upstream}: a valid canonical response`);
    t.same(searchSemantics(response), SEARCHED, `${upstream}: the search and its citation`);
    const events = decodeStream(upstream, stream, fakeRoute(), SEARCH_REQUEST);
    t.same(searchSemantics(collect(events)), SEARCHED, `${upstream} streamed: the same`);
    for (const inbound of INBOUND_SHAPES) {
      const pair = `${upstream} -> ${inbound}`;
      // Chat has no search item (CHAT_RESPONSE_DROPPED), and its stream no annotations.
      const expected = inbound === 'openai.chat' ? { ...SEARCHED, searches: [], cited: [] } : SEARCHED;
      const json = INBOUND[inbound].encodeResponse(response, context(SEARCH_REQUEST));
      t.same(responseProblems(inbound, json), [], `${pair}: valid in the client's shape`);
      if (inbound === 'openai.chat') t.same((json as any).choices[0].message.annotations.map((a: any) => a.url_citation.url), [SEARCH_URL], `${pair}: the citation as an annotation`);
      else t.same(searchSemantics(readBackResponse(inbound, json)), expected, `${pair}: same search and citation`);
      const sse = encodeStream(inbound, context(SEARCH_REQUEST), events);
      t.same(await streamProblems(inbound, sse), [], `${pair} streamed: valid in the client's shape`);
      t.same(searchSemantics(readBackStream(inbound, sse)), expected, `${pair} streamed: same search and citation`);
    }
  }
});
