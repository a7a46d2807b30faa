// What translation reads of a request (TranslationSource): the canonical form, decoded once, and
// the client's JSON; routed copies per candidate; the context an encoder gets.
import t from 'tap';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import type { InboundCodec, Principal, Route } from '../../core/plugin-api.ts';
import type { InferenceCall } from '../../core/plugins/context.ts';
import { TranslationSource } from '../../core/pipeline/translation-source.ts';

const json = { model: 'client-model', input: 'hello', stream: true };
const call = { shape: 'openai.responses', body: Buffer.from(JSON.stringify(json)), json: () => json, member: (name: string) => (json as Record<string, unknown>)[name], memberBytes: () => undefined, mayHold: () => true, mayHoldReasoningById: () => true, model: 'client-model', stream: true } as InferenceCall;
let decoded = 0;
const codec = {
  decodeRequest: (body: unknown): CanonicalRequest => {
    decoded++;
    return { model: (body as typeof json).model, messages: [{ role: 'user', content: [{ type: 'text', text: (body as typeof json).input }] }] } as unknown as CanonicalRequest;
  },
} as unknown as InboundCodec;
const route = { upstreamModel: 'upstream-model' } as Route;
const principal = {} as Principal;

t.test('decodes once; routed copies carry the route\'s model and the call\'s stream', async (t) => {
  const source = await TranslationSource.decode(codec, call, principal);
  t.equal(decoded, 1);
  const routed = source.routed(route, true);
  t.equal(routed.model, 'upstream-model');
  t.equal(routed.stream, true);
  t.equal(source.request.model, 'client-model', 'the canonical request itself is not changed');
  t.equal(routed.messages, source.request.messages, 'a shallow copy');
  t.equal(source.inbound, json);
  t.equal(decoded, 1, 'not decoded again');
});

t.test('an encode context carries the request, the client\'s JSON, the id and the model asked for', async (t) => {
  const source = await TranslationSource.decode(codec, call, principal);
  const ctx = source.encodeContext('req-1', 'client-model');
  t.equal(ctx.request, source.request);
  t.equal(ctx.inbound, json);
  t.equal(ctx.requestId, 'req-1');
  t.equal(ctx.model, 'client-model');
});

t.test('a stateful codec expands the request before it is decoded, and keeps the answer when asked', async (t) => {
  const kept: unknown[] = [];
  const stateful = {
    ...codec,
    state: {
      expand: async (body: Record<string, unknown>) => ({ json: { ...body, input: `earlier turn, then ${String(body.input)}` }, stored: true }),
      remember: (_expanded: unknown, response: unknown) => { kept.push(response); },
    },
  } as unknown as InboundCodec;
  const source = await TranslationSource.decode(stateful, call, principal);
  t.same(source.request.messages[0].content, [{ type: 'text', text: 'earlier turn, then hello' }], 'decoded from the expanded JSON');
  t.equal(source.inbound, json, 'the client\'s own JSON is what responses echo');
  t.equal(source.encodeContext('r', 'm').stored, true);
  t.equal(source.keepsAnswer, true);
  source.remember({ id: 'x' } as never, source.encodeContext('r', 'm'), null);
  t.same(kept, [{ id: 'x' }]);
});

t.test('x-relay-dropped names only what a header can carry, once each, and not too many', async (t) => {
  const dropping = (names: string[]) => ({ ...codec, droppedParameters: () => names }) as unknown as InboundCodec;
  t.same((await TranslationSource.decode(dropping([]), call, principal)).droppedHeader(), {});
  const source = await TranslationSource.decode(dropping(['seed', 'input.web_search_call', 'input.\ud83d\u0041', 'input.a\r\nset-cookie: x', 'seed']), call, principal);
  t.same(source.droppedHeader(), { 'x-relay-dropped': 'seed, input.web_search_call, unnamed' });
  const many = await TranslationSource.decode(dropping(Array.from({ length: 100 }, (_, i) => `p${i}`)), call, principal);
  t.equal(many.droppedHeader()['x-relay-dropped'].split(', ').length, 32);
});

t.test('x-relay-dropped adds what the answering route\'s upstream encoder left out, and only that route\'s', async (t) => {
  const dropping = { ...codec, droppedParameters: () => ['seed'] } as unknown as InboundCodec;
  const source = await TranslationSource.decode(dropping, call, principal);
  const first = { upstreamModel: 'a' } as Route;
  const second = { upstreamModel: 'b' } as Route;
  source.noteUpstreamDropped(first, ['temperature', 'seed']);
  source.noteUpstreamDropped(second, []);
  t.same(source.droppedHeader(first), { 'x-relay-dropped': 'seed, temperature' });
  t.same(source.droppedHeader(second), { 'x-relay-dropped': 'seed' }, 'a failover to an upstream that drops nothing more');
  source.noteUpstreamDropped(first, []);
  t.same(source.droppedHeader(first), { 'x-relay-dropped': 'seed' }, 'encoded again, with nothing left out');
  const clean = await TranslationSource.decode(codec, call, principal);
  clean.noteUpstreamDropped(first, ['reasoning']);
  t.same(clean.droppedHeader(first), { 'x-relay-dropped': 'reasoning' });
  t.same(clean.droppedHeader(first, ['image', 'reasoning', 'image']), { 'x-relay-dropped': 'reasoning, image' }, 'what the answer lost, once each, after the request\'s');
  t.equal(clean.droppedNames(second, []), '', 'nothing dropped: an empty list (no trailer)');
});
