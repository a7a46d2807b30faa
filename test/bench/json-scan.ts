// Microbench of what an inference endpoint spends reading a request body: JSON.parse of the whole
// body (what it did before) against core/http/json-scan-wasm/ (the body checked as JSON in place,
// `model` and `stream` read from their spans), on the bench's small chat body and on agent-sized
// Codex and Claude Code bodies (agent-bodies.ts). Prints microseconds per body, and the heap a
// parsed body holds: the pipeline keeps its request's body until the answer ends, which for an
// agent's streamed turn is seconds to minutes, so that much stays on the heap per request in flight.
//   npx tsx test/bench/json-scan.ts [SECONDS_PER_CASE=1]
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readInferenceBody } from '../../core/http/inference-body.ts';
import { agentBodies } from './agent-bodies.ts';
import { timePerCall } from './time-per-call.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const seconds = Number(process.argv[2] ?? 1);

const parseWhole = (raw: Buffer) => {
  const json = JSON.parse(raw.toString('utf8')) as { model: string; stream?: boolean };
  return json.model.length + (json.stream === true ? 1 : 0);
};
const scanInPlace = (raw: Buffer) => {
  const body = readInferenceBody(raw);
  return body.model.length + (body.stream ? 1 : 0);
};

/** Heap held by one parsed copy of `raw`, in KB (the mean over copies kept at once: about 8 MB of them). */
function heapHeld(raw: Buffer): number {
  const copies = Math.min(5000, Math.max(8, Math.round(8e6 / raw.length)));
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: copies }, () => JSON.parse(raw.toString('utf8')) as unknown);
  gc();
  const held = (process.memoryUsage().heapUsed - before) / kept.length / 1024;
  kept.length = 0;
  return held;
}

const rows: string[] = [];
for (const [name, raw] of agentBodies()) {
  const parse = timePerCall(() => parseWhole(raw), seconds);
  const scan = timePerCall(() => scanInPlace(raw), seconds);
  rows.push(`${name.padEnd(24)} ${(raw.length / 1024).toFixed(1).padStart(7)} KB  JSON.parse ${parse.toFixed(2).padStart(8)} us  scan ${scan.toFixed(2).padStart(8)} us  ${(parse / scan).toFixed(1).padStart(4)}x  parsed copy holds ${heapHeld(raw).toFixed(1).padStart(6)} KB of heap`);
}
process.stdout.write(`Reading an inference request body (model, stream), microseconds per body, ${seconds} s per case\n${rows.join('\n')}\n`);
