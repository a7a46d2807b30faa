// What translation reads of a request (TranslationSource): the canonical form and the client's
// JSON, until the pipeline lets go of both at the answer's first byte; an encoder's context reads
// through it, so an encoder that kept its context holds nothing of the request after that.
import t from 'tap';
import type { CanonicalRequest, InboundCodec, Route } from '../../core/plugin-api.ts';
import type { InferenceCall } from '../../core/plugins/context.ts';
import { TranslationSource } from '../../core/pipeline/translation-source.ts';

const json = { model: 'client-model', input: 'hello', stream: true };
const call = { shape: 'openai.responses', body: Buffer.from(JSON.stringify(json)), json, model: 'client-model', stream: true } as InferenceCall;
let decoded = 0;
const codec = {
  decodeRequest: (body: unknown): CanonicalRequest => {
    decoded++;
    return { model: (body as typeof json).model, messages: [{ role: 'user', content: [{ type: 'text', text: (body as typeof json).input }] }] } as unknown as CanonicalRequest;
  },
} as unknown as InboundCodec;
const route = { upstreamModel: 'upstream-model' } as Route;

t.test('decodes once; routed copies carry the route\'s model and the call\'s stream', async (t) => {
  const source = TranslationSource.decode(codec, call);
  t.equal(decoded, 1);
  const routed = source.routed(route, true);
  t.equal(routed.model, 'upstream-model');
  t.equal(routed.stream, true);
  t.equal(source.request.model, 'client-model', 'the canonical request itself is not changed');
  t.equal(routed.messages, source.request.messages, 'a shallow copy');
  t.equal(source.inbound, json);
  t.equal(decoded, 1, 'not decoded again');
});

t.test('released: the request, its JSON and an encode context made before all throw', async (t) => {
  const source = TranslationSource.decode(codec, call);
  const ctx = source.encodeContext('req-1', 'client-model');
  t.equal(ctx.request, source.request, 'the context reads the canonical request');
  t.equal(ctx.inbound, json, 'and the client\'s JSON');
  source.release();
  t.throws(() => source.request, /let go/);
  t.throws(() => source.inbound, /let go/);
  t.throws(() => source.routed(route, false), /let go/);
  t.throws(() => ctx.request, /let go/, 'a context kept by an encoder holds nothing more');
  t.throws(() => ctx.inbound, /let go/);
  t.equal(ctx.requestId, 'req-1', 'what is not the request stays');
  t.equal(ctx.model, 'client-model');
});
