// Each inbound codec's decodeRequest with random input (any JSON, and valid requests with fields
// mutated) throws nothing but RelayError; what it accepts, each upstream adapter encodes without
// throwing anything but RelayError. Fixed seed, bounded runs.
import fc from 'fast-check';
import t from 'tap';
import type { InboundCodec } from '../../core/plugin-api.ts';
import { isRelayError } from '../../core/errors.ts';
import { chatCodec, responsesCodec } from '../../plugins/wire-vendor-a/codec/index.ts';
import { messagesCodec } from '../../plugins/wire-vendor-b/codec/index.ts';
import { canonicalCodec } from '../../plugins/wire-canonical/codec.ts';
import * as openaiUpstream from '../../plugins/vendor-openai/codec/index.ts';
import * as anthropicUpstream from '../../plugins/vendor-anthropic/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { recordCounters } from './counters.ts';
import { hostileBody } from './hostile-bodies.ts';
import { parseInferenceJson } from '../../core/http/inference-body.ts';

const SEED = 1102;
const RUNS = 300;

const VALID: Array<{ codec: InboundCodec; valid: Record<string, unknown> }> = [
  { codec: chatCodec, valid: { model: 'm', messages: [{ role: 'system', content: 'x' }, { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: 'ok' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'auto', max_tokens: 5, response_format: { type: 'json_object' }, web_search_options: { search_context_size: 'high', user_location: { type: 'approximate', approximate: { city: 'Berlin' } } }, reasoning_effort: 'low', stream: true, stream_options: { include_usage: true } } },
  { codec: responsesCodec, valid: { model: 'm', instructions: 'x', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }, { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: 'ok' }, { type: 'reasoning', id: 'r', summary: [{ type: 'summary_text', text: 't' }] }, { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q', sources: [{ type: 'url', url: 'https://example.com' }] } }], tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'x' } }, { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'g', parameters: { type: 'object' } }] }, { type: 'web_search', filters: { allowed_domains: ['example.com'] }, user_location: { type: 'approximate', country: 'DE' }, search_context_size: 'low' }], reasoning: { effort: 'high', summary: 'auto' }, text: { format: { type: 'json_schema', name: 's', schema: { type: 'object' } } }, max_output_tokens: 5 } },
  { codec: messagesCodec, valid: { model: 'm', max_tokens: 5, system: [{ type: 'text', text: 'x' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }, { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'server_tool_use', id: 's', name: 'web_search', input: { query: 'q' } }, { type: 'web_search_tool_result', tool_use_id: 's', content: [{ type: 'web_search_result', url: 'https://example.com', title: 'E', encrypted_content: 'x', page_age: null }] }, { type: 'text', text: 'cited', citations: [{ type: 'web_search_result_location', url: 'https://example.com', title: 'E', cited_text: 'c', encrypted_index: 'i' }] }, { type: 'tool_use', id: 't', name: 'f', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'ok' }] }] }], tools: [{ name: 'f', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search', max_uses: 2, blocked_domains: ['example.net'] }], tool_choice: { type: 'any' }, thinking: { type: 'enabled', budget_tokens: 2048 }, stop_sequences: ['x'] } },
  { codec: canonicalCodec, valid: { model: 'm', system: [{ type: 'text', text: 'x' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: [{ type: 'web_search_call', id: 'ws_1', query: 'q', status: 'completed', origin: 'openai', raw: { id: 'ws_1', type: 'web_search_call' } }, { type: 'text', text: 'a', citations: [{ type: 'url_citation', url: 'https://example.com', start_index: 0, end_index: 1 }] }] }, { role: 'user', content: [{ type: 'text', text: 'more' }] }], tools: [{ type: 'web_search', max_uses: 1 }], max_output_tokens: 5 } },
];

const UPSTREAMS = [
  ['openai.chat', openaiUpstream.encodeRequest], ['openai.responses', openaiUpstream.encodeRequest],
  ['anthropic.messages', anthropicUpstream.encodeRequest],
] as const;

let badInputs = 0;

function check(codec: InboundCodec, input: unknown): string | null {
  badInputs++;
  let decoded;
  try {
    decoded = codec.decodeRequest(input);
  } catch (err) {
    return isRelayError(err) ? null : `decodeRequest threw ${(err as Error)?.name}: ${(err as Error)?.message}`;
  }
  for (const [shape, encode] of UPSTREAMS) {
    try {
      encode(shape, decoded, fakeRoute());
    } catch (err) {
      if (!isRelayError(err)) return `${shape} encodeRequest threw ${(err as Error)?.name}: ${(err as Error)?.message}`;
    }
  }
  return null;
}

for (const { codec, valid } of VALID) {
  t.test(`${codec.shape}: decodeRequest throws only RelayError`, async (t) => {
    t.equal(check(codec, valid), null, 'the valid request decodes and encodes');
    const problems: string[] = [];
    for (const input of fc.sample(fc.anything({ maxDepth: 4, withNullPrototype: true, withBigInt: true, withDate: true, withMap: true }), { seed: SEED, numRuns: RUNS })) {
      const p = check(codec, input);
      if (p) problems.push(`${p} for ${fc.stringify(input).slice(0, 200)}`);
    }
    for (const body of fc.sample(hostileBody(valid as never), { seed: SEED, numRuns: RUNS })) {
      let input: unknown;
      try {
        input = parseInferenceJson(body.bytes);
      } catch {
        continue; // not JSON, or nested past MAX_NESTING: the listener answers 400 before any codec runs
      }
      const p = check(codec, input);
      if (p) problems.push(`${p} for ${body.what}`);
    }
    t.same(problems.slice(0, 20), [], `${RUNS * 2} inputs`);
  });
}

t.teardown(() => recordCounters('fuzz-codecs', { badInputs }));
