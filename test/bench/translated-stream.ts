// Microbench of what a translated stream costs Relay's CPU besides the proxying: the bench's
// Anthropic Messages answer (20 text deltas, as the fake upstream sends it) read as SSE, decoded to
// canonical events and encoded as a Responses stream, as translate.ts does for a Codex client of
// a Claude model. The request is the bench case's (`responses-to-messages`): no tools, no
// instructions. Prints microseconds per stream; for the encoder alone with tools, see
// responses-encoder.ts.
//   npx tsx test/bench/translated-stream.ts [SECONDS=3]
import type { Route } from '../../core/plugin-api.ts';
import type { StreamEvent } from '../../core/plugin-api/canonical.ts';
import { SseParser } from '../../core/http/sse.ts';
import { messagesStreamDecoder } from '../../plugins/vendor-anthropic/codec/messages-stream.ts';
import { decodeResponsesRequest } from '../../plugins/wire-vendor-a/codec/responses-request.ts';
import { responsesStreamEncoder } from '../../plugins/wire-vendor-a/codec/responses-stream.ts';
import { anthropic } from '../support/fake-upstream.ts';
import { timePerCall } from './time-per-call.ts';

const seconds = Number(process.argv[2] ?? 3);
const inbound = { model: 'bench-claude', input: 'Say hello in a few words.', max_output_tokens: 64, stream: true };
const request = decodeResponsesRequest(inbound);
const route = { upstreamModel: 'bench-claude' } as Route;
const upstreamBody = Buffer.from(anthropic.events({ model: 'bench-claude', chunks: 20 }).join(''));

let n = 0;
function translateOne(): number {
  const decoder = messagesStreamDecoder(route, request);
  const encoder = responsesStreamEncoder({ requestId: `req_${n++}`, model: 'bench-claude', request, inbound });
  const pending: StreamEvent[] = [];
  const parser = new SseParser((event, data) => { for (const ev of decoder.decode(event, data)) pending.push(ev); });
  parser.feed(upstreamBody);
  parser.end();
  let out = '';
  for (const ev of pending) out += encoder.encode(ev);
  return (out + encoder.finish()).length;
}

const size = translateOne();
for (let round = 0; round < 3; round++) {
  const us = timePerCall(translateOne, seconds);
  process.stdout.write(`translated stream (Messages -> Responses, 20 deltas): ${upstreamBody.length} bytes in, ${size} out: ${us.toFixed(1)} us per stream\n`);
}
