// The conformance corpus (conformance.test.ts) for the Gemini upstream shape of vendor-google
// ('gemini.generate', Gemini API and Vertex AI alike): every case it runs for the OpenAI and
// Anthropic upstreams, run here for Gemini. Requests from every inbound fixture are encoded,
// checked against Gemini's wire (test/support/gemini-wire.ts) and read back the way Gemini reads
// them; responses, streams (text, reasoning, streamed tool calls), in-stream errors, cut streams,
// the inspector and error bodies go to every client shape and are validated there.
// (Claude on Vertex is passed through only: Anthropic's own bytes, nothing is translated.)
import t from 'tap';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import * as google from '../../plugins/vendor-google/codec/index.ts';
import { GEMINI_REQUEST_DROPPED, GEMINI_SHAPE } from '../../plugins/vendor-google/codec/index.ts';
import { geminiApiUrl } from '../../plugins/vendor-google/endpoints.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { geminiRequestProblems, readGeminiRequest } from '../support/gemini-wire.ts';
import { sseFrames } from '../support/sse-frames.ts';
import {
  INBOUND, INBOUND_SHAPES, canonicalProblems, collect, context, encodeStream, readBackResponse, readBackStream, responseProblems,
  responseSemantics, streamProblems, type InboundShape,
} from './harness.ts';
import { GEMINI_ERROR_STREAM, GEMINI_RESPONSE, GEMINI_STREAM, GEMINI_USAGE } from './fixtures/gemini.ts';
import { REQUEST_FIXTURES } from './fixtures/requests.ts';
import { ANSWER, CALLS, RATE_LIMIT_MESSAGE, THOUGHT } from './fixtures/responses.ts';
import { lostFeatures } from './request-probes.ts';

const gemini = google.geminiTranslation('json-schema');

/** Gemini pairs results with calls by name and order: ids are compared by their order of appearance. */
function ordinalIds(request: CanonicalRequest): CanonicalRequest {
  const ids = new Map<string, string>();
  const ordinal = (id: string) => {
    if (!ids.has(id)) ids.set(id, `call#${ids.size + 1}`);
    return ids.get(id)!;
  };
  return {
    ...request,
    messages: request.messages.map((m) => ({
      ...m,
      content: m.content.map((p) => (p.type === 'tool_call' ? { ...p, id: ordinal(p.id) } : p.type === 'tool_result' ? { ...p, tool_call_id: ordinal(p.tool_call_id) } : p)),
    })),
  } as CanonicalRequest;
}

// ------------------------------------------------------------------ requests

/** Features of a request each inbound shape loses on its way to Gemini (GEMINI_REQUEST_DROPPED says why). */
const REQUEST_DROPS: Record<InboundShape, string[]> = {
  'openai.chat': ['image detail', 'metadata', 'response format name and strict', 'system message position', 'system prompt parts', 'tool strict flag', 'user'],
  'openai.responses': [
    'custom tools', 'image detail', 'metadata', 'reasoning history', 'response format name and strict', 'system message position', 'system prompt parts',
    'tool strict flag', 'user',
  ],
  'anthropic.messages': ['reasoning effort', 'reasoning history', 'system message position', 'system prompt parts', 'user'],
  canonical: [
    'custom tools', 'image detail', 'metadata', 'reasoning history', 'response format name and strict', 'system message position', 'system prompt parts',
    'tool strict flag', 'user',
  ],
};
/** Only the kitchen sink's own features count there (the scenario fixtures add the strict flag). */
const KITCHEN_SINK_DROPS = (inbound: InboundShape) => REQUEST_DROPS[inbound].filter((f) => f !== 'tool strict flag' || inbound === 'anthropic.messages');

t.test('requests: every inbound shape through Gemini', async (t) => {
  for (const inbound of INBOUND_SHAPES) {
    for (const fixture of REQUEST_FIXTURES[inbound]) {
      const request = INBOUND[inbound].decodeRequest(fixture.body);
      const pair = `${inbound} -> ${GEMINI_SHAPE} [${fixture.name}]`;
      const body = gemini.encodeRequest(GEMINI_SHAPE, request, fakeRoute('upstream-model')) as Record<string, unknown>;
      t.notOk('model' in body, `${pair}: the model is in the URL, not the body`);
      t.same(geminiRequestProblems(body), [], `${pair}: a valid generateContent request`);
      const back = readGeminiRequest(body);
      const lost = lostFeatures(ordinalIds(request), ordinalIds(back));
      if (fixture.name === 'kitchen sink') t.same(lost, KITCHEN_SINK_DROPS(inbound), `${pair}: drops exactly what the table says`);
      else t.same(lost.filter((f) => !REQUEST_DROPS[inbound].includes(f)), [], `${pair}: drops nothing outside the table`);
    }
  }
  t.equal(geminiApiUrl('https://generativelanguage.googleapis.com/v1beta', 'upstream-model', false),
    'https://generativelanguage.googleapis.com/v1beta/models/upstream-model:generateContent', "the route's upstream model is in the URL");
});

t.test('requests: the kitchen sink keeps the essentials', async (t) => {
  for (const inbound of INBOUND_SHAPES) {
    const request = INBOUND[inbound].decodeRequest(REQUEST_FIXTURES[inbound][0]!.body);
    const back = readGeminiRequest(gemini.encodeRequest(GEMINI_SHAPE, request, fakeRoute()));
    const pair = `${inbound} -> ${GEMINI_SHAPE}`;
    t.match(back.system?.map((p) => p.text).join('\n'), /You are terse\./, `${pair}: system prompt`);
    t.ok(back.messages.some((m) => m.content.some((p) => p.type === 'image')), `${pair}: image`);
    t.ok(back.messages.some((m) => m.content.some((p) => p.type === 'tool_result')), `${pair}: tool results`);
    t.ok(back.tools?.some((tool) => 'name' in tool && tool.name === 'lookup'), `${pair}: function tool`);
    t.ok(back.reasoning?.effort ?? back.reasoning?.budget_tokens, `${pair}: reasoning effort`);
    t.equal(back.response_format?.type, 'json_schema', `${pair}: structured output`);
    t.equal(back.max_output_tokens, 40000, `${pair}: max output tokens`);
  }
});

// ------------------------------------------------------------------ responses

const TOOLS_REQUEST: CanonicalRequest = {
  model: 'client-model',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Look up cats and dogs' }] }],
  tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
};
const CHAT_INBOUND_WITH_USAGE = { stream_options: { include_usage: true } };

function expected(inbound: InboundShape) {
  const noReasoning = inbound === 'openai.chat';
  return { text: ANSWER, refusal: '', reasoning: noReasoning ? '' : THOUGHT, calls: CALLS, stop: 'tool_use', usage: GEMINI_USAGE };
}

t.test('responses: Gemini decodes to canonical', async (t) => {
  const response = gemini.decodeResponse(GEMINI_SHAPE, GEMINI_RESPONSE, fakeRoute(), TOOLS_REQUEST);
  t.same(canonicalProblems('response', response), [], 'a valid canonical response');
  t.same(responseSemantics(response), expected('canonical'), 'content, calls, stop reason and usage');
  t.same(gemini.usageFromBody(GEMINI_SHAPE, GEMINI_RESPONSE), response.usage, 'usageFromBody');
  t.match(response.content.filter((p) => p.type === 'reasoning'), [{ origin: 'gemini', text: THOUGHT }, { origin: 'gemini', signature: 'sig-g' }], 'the thought signature is kept');
});

t.test('responses: Gemini to every inbound shape', async (t) => {
  const response = gemini.decodeResponse(GEMINI_SHAPE, GEMINI_RESPONSE, fakeRoute(), TOOLS_REQUEST);
  for (const inbound of INBOUND_SHAPES) {
    const pair = `${GEMINI_SHAPE} -> ${inbound}`;
    const body = INBOUND[inbound].encodeResponse(response, context(TOOLS_REQUEST));
    t.same(responseProblems(inbound, body), [], `${pair}: valid in the client's shape`);
    t.same(responseSemantics(readBackResponse(inbound, body)), expected(inbound), `${pair}: same answer`);
  }
});

t.test('responses: safety blocks and max tokens', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ candidates: [{ content: { parts: [{ text: 'Once upon' }] }, finishReason: 'MAX_TOKENS' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } }, 'max_tokens'],
    [{ candidates: [{ finishReason: 'SAFETY' }], usageMetadata: { promptTokenCount: 3 } }, 'content_filter'],
    [{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 3 } }, 'content_filter'],
    [{ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'MALFORMED_FUNCTION_CALL' }] }, 'error'],
  ];
  for (const [body, stop] of cases) {
    const response = gemini.decodeResponse(GEMINI_SHAPE, body, fakeRoute(), TOOLS_REQUEST);
    t.equal(response.stop_reason, stop);
    for (const inbound of INBOUND_SHAPES) {
      const out = INBOUND[inbound].encodeResponse(response, context(TOOLS_REQUEST));
      t.same(responseProblems(inbound, out), [], `${stop} -> ${inbound}: valid`);
      // Anthropic has no content_filter: a blocked answer is its `refusal`.
      const want = stop === 'content_filter' && inbound === 'anthropic.messages' ? 'refusal' : stop;
      if (stop !== 'error') t.equal(readBackResponse(inbound, out).stop_reason, want, `${stop} -> ${inbound}: stop reason`);
    }
  }
});

t.test('responses: an image and code execution reach every inbound shape valid, the image named where it has no place', async (t) => {
  const body = {
    candidates: [{ content: { role: 'model', parts: [
      { text: 'A cat:' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { executableCode: { language: 'PYTHON', code: 'print(2 + 2)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '4' } },
    ] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 9 },
  };
  const decoded: string[] = [];
  const response = gemini.decodeResponse(GEMINI_SHAPE, body, fakeRoute(), TOOLS_REQUEST, decoded);
  t.same(decoded, [], 'the decoder maps every part');
  t.same(canonicalProblems('response', response), [], 'a valid canonical response');
  for (const inbound of INBOUND_SHAPES) {
    const ctx = { ...context(TOOLS_REQUEST), dropped: [] as string[] };
    const out = INBOUND[inbound].encodeResponse(response, ctx);
    t.same(responseProblems(inbound, out), [], `${inbound}: valid`);
    t.same(ctx.dropped, inbound === 'canonical' ? [] : ['image'], `${inbound}: the image is ${inbound === 'canonical' ? 'carried' : 'named'}`);
    const text = readBackResponse(inbound, out).content.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('\n\n');
    t.match(text, /A cat:[\s\S]*```python\nprint\(2 \+ 2\)\n```[\s\S]*```output\n4\n```/, `${inbound}: the code and its output as text`);
  }
});

// ------------------------------------------------------------------ streams

function decodeGeminiStream(sse: string, request: CanonicalRequest = TOOLS_REQUEST) {
  const decoder = gemini.streamDecoder(GEMINI_SHAPE, fakeRoute(), request);
  return [...sseFrames(sse).flatMap((f) => decoder.decode(f.event, f.data)), ...decoder.finish()];
}

t.test('streams: Gemini decodes to valid canonical events', async (t) => {
  const events = decodeGeminiStream(GEMINI_STREAM);
  for (const event of events) t.same(canonicalProblems('event', event), [], `${event.type} is a canonical event`);
  t.equal(events[0]!.type, 'start');
  t.equal(events.at(-1)!.type, 'end');
  t.same(responseSemantics(collect(events)), expected('canonical'), 'the same answer as the non-streamed response');
});

t.test('streams: Gemini to every inbound shape', async (t) => {
  const events = decodeGeminiStream(GEMINI_STREAM);
  for (const inbound of INBOUND_SHAPES) {
    const pair = `${GEMINI_SHAPE} -> ${inbound}`;
    const sse = encodeStream(inbound, context(TOOLS_REQUEST, inbound === 'openai.chat' ? CHAT_INBOUND_WITH_USAGE : {}), events);
    t.same(await streamProblems(inbound, sse), [], `${pair}: a valid stream in the client's shape`);
    t.same(responseSemantics(readBackStream(inbound, sse)), expected(inbound), `${pair}: same answer as the non-streamed response`);
  }
});

t.test('streams: a Gemini error after the opening frame reaches every client shape', async (t) => {
  const events = decodeGeminiStream(GEMINI_ERROR_STREAM);
  const error = events.at(-1);
  t.equal(error?.type, 'error');
  if (error?.type !== 'error') return;
  t.equal(error.error.code, 'RELAY_ERR_UPSTREAM_RATE_LIMITED', 'RESOURCE_EXHAUSTED is the upstream\'s rate limit');
  t.equal(error.error.message, RATE_LIMIT_MESSAGE, "the upstream's words");
  for (const inbound of INBOUND_SHAPES) {
    const sse = encodeStream(inbound, context(TOOLS_REQUEST), events);
    t.same(await streamProblems(inbound, sse), [], `${inbound}: valid`);
    t.match(sse, /try again in 2s/, `${inbound}: the message survives`);
  }
  const responses = sseFrames(encodeStream('openai.responses', context(TOOLS_REQUEST), events));
  const failed = JSON.parse(responses.at(-1)!.data) as { type: string; response: { error: { code: string } } };
  t.equal(failed.type, 'response.failed');
  t.equal(failed.response.error.code, 'rate_limit_exceeded', 'Codex reads rate_limit_exceeded inside response.failed');
});

t.test('streams: a Gemini stream that stops early ends the client stream with an error', async (t) => {
  const cut = GEMINI_STREAM.split('\n\n').slice(0, 4).join('\n\n') + '\n\n';
  const events = decodeGeminiStream(cut);
  t.equal(events.at(-1)?.type, 'error', 'no finishReason: an error at the end');
  for (const inbound of INBOUND_SHAPES) t.same(await streamProblems(inbound, encodeStream(inbound, context(TOOLS_REQUEST), events)), [], inbound);
});

// ------------------------------------------------------------------ inspector

t.test('the stream inspector classifies frames and reads usage', async (t) => {
  const inspector = gemini.streamInspector(GEMINI_SHAPE);
  const kinds = sseFrames(GEMINI_STREAM).map((f) => inspector.inspect(f.event, f.data));
  t.ok(kinds.every((k) => k === 'output'), 'every frame carries output');
  t.same(inspector.usage(), { input_tokens: 100, output_tokens: 20, cache_read_tokens: 40, cache_write_tokens: 0, reasoning_tokens: 5 });
  const errors = gemini.streamInspector(GEMINI_SHAPE);
  t.same(sseFrames(GEMINI_ERROR_STREAM).map((f) => errors.inspect(f.event, f.data)), ['opening', 'error'], 'a usage-only frame opens; an error frame is an error');
});

// ------------------------------------------------------------------ errors

t.test('upstream errors map by status and keep the upstream message', async (t) => {
  const googleStatus: Record<number, string | undefined> = {
    400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
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
  for (const [status, code, relayStatus] of table) {
    const body = JSON.stringify({ error: { code: status, message: `upstream says ${status}`, ...(googleStatus[status] ? { status: googleStatus[status] } : {}) } });
    const error = gemini.decodeError(GEMINI_SHAPE, status, body);
    t.equal(error.code, code, `${status} -> ${code}`);
    t.equal(error.status, relayStatus);
    t.equal(error.message, `upstream says ${status}`, `${status}: message kept`);
  }
  t.equal(gemini.decodeError(GEMINI_SHAPE, 502, '<html>Bad Gateway</html>').message, '<html>Bad Gateway</html>', 'non-JSON body kept as text');
  t.equal(gemini.decodeError(GEMINI_SHAPE, 500, '').message, 'the upstream answered HTTP 500', 'empty body');
  t.match(gemini.decodeError(GEMINI_SHAPE, 400, JSON.stringify([{ error: { code: 400, message: 'wrapped', status: 'INVALID_ARGUMENT' } }])), { code: 'RELAY_ERR_BAD_REQUEST', message: 'wrapped' }, 'an error wrapped in an array');
});

// ------------------------------------------------------------------ drop table

t.test('the Gemini codec documents what it drops', async (t) => {
  for (const [field, rule] of Object.entries(GEMINI_REQUEST_DROPPED)) t.ok(typeof rule === 'string' && rule.length > 5, `${field} says why`);
  const documented = Object.keys(GEMINI_REQUEST_DROPPED).join(' ');
  for (const feature of new Set(Object.values(REQUEST_DROPS).flat())) {
    const words: Record<string, RegExp> = {
      'image detail': /image detail/, metadata: /metadata/, parallel_tool_calls: /parallel_tool_calls/, user: /user/,
      'response format name and strict': /json_schema name/, 'system message position': /position of system messages/, 'system prompt parts': /system/,
      'reasoning history': /reasoning/, 'custom tools': /custom tools/, 'tool strict flag': /strict/, 'reasoning effort': /reasoning effort/, stop: /stop sequences/,
    };
    t.match(documented, words[feature] ?? new RegExp(feature), `${feature}: in GEMINI_REQUEST_DROPPED`);
  }
});
