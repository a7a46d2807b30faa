// Microbench of the Responses stream encoder (what a translated stream to a Codex-like client
// costs Relay's CPU besides the proxying): a request carrying N function tools, as a coding agent
// sends them, and a canonical answer of 20 text deltas, encoded M times. Prints microseconds per
// encoded stream and its size.
//   npx tsx test/bench/responses-encoder.ts [TOOLS=12] [STREAMS=20000]
import type { StreamEvent } from '../../core/plugin-api/canonical.ts';
import { decodeResponsesRequest } from '../../plugins/wire-vendor-a/codec/responses-request.ts';
import { responsesStreamEncoder } from '../../plugins/wire-vendor-a/codec/responses-stream.ts';

const toolCount = Number(process.argv[2] ?? 12);
const streams = Number(process.argv[3] ?? 20_000);

const tool = (i: number) => ({
  type: 'function',
  name: `tool_${i}`,
  description: `Tool number ${i}. `.repeat(60),
  strict: false,
  parameters: {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 6 }, (_, k) => [`arg_${k}`, { type: 'string', description: `Argument ${k} of tool ${i}.` }])),
    required: ['arg_0'],
    additionalProperties: false,
  },
});
const inbound = {
  model: 'bench-claude',
  instructions: 'You are a coding agent. '.repeat(200),
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello in a few words.' }] }],
  tools: Array.from({ length: toolCount }, (_, i) => tool(i)),
  stream: true,
};
const request = decodeResponsesRequest(inbound);

const events: StreamEvent[] = [
  { type: 'start', id: 'msg_bench', model: 'bench-claude' },
  { type: 'part_start', index: 0, part: { type: 'text' } },
  ...Array.from({ length: 20 }, (): StreamEvent => ({ type: 'delta', index: 0, delta: { type: 'text', text: 'Hello, one piece. ' } })),
  { type: 'part_end', index: 0 },
  { type: 'end', stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 20, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } },
];

function encodeOne(n: number): number {
  const encoder = responsesStreamEncoder({ requestId: `req_${n}`, model: 'bench-claude', request, inbound });
  let bytes = 0;
  for (const event of events) bytes += encoder.encode(event).length;
  return bytes + encoder.finish().length;
}

let size = 0;
for (let i = 0; i < 2000; i++) size = encodeOne(i); // warm-up
for (let round = 0; round < 3; round++) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < streams; i++) encodeOne(i);
  const us = Number(process.hrtime.bigint() - start) / 1000 / streams;
  process.stdout.write(`responses stream encoder: ${toolCount} tools, ${size} bytes per stream: ${us.toFixed(1)} us per stream\n`);
}
