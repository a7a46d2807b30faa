// Microbench of a translated agent turn's two big strings. Reading: JSON.parse(body.toString())
// against core/http/json-pieces.ts (the text made in pieces), for a ~400 KB Codex and Claude Code
// turn. Writing: JSON.stringify then Buffer.from (one string and one Buffer the size of the
// request) against core/http/json-parts.ts (the same bytes as parts of ~32 K characters), for what
// translation sends upstream for those turns (Codex's encoded for a Messages upstream, Claude
// Code's for Chat Completions). Prints microseconds per request.
//   npx tsx test/bench/json-parts.ts [SECONDS_PER_CASE=1]
import { stringifyToParts } from '../../core/http/json-parts.ts';
import { parseInPieces } from '../../core/http/json-pieces.ts';
import { responsesCodec } from '../../plugins/wire-vendor-a/codec/index.ts';
import { messagesCodec } from '../../plugins/wire-vendor-b/codec/index.ts';
import { encodeRequest as encodeForMessages } from '../../plugins/vendor-anthropic/codec/index.ts';
import { encodeRequest as encodeForChat } from '../../plugins/vendor-openai/codec/index.ts';
import type { CanonicalRequest, Route } from '../../core/plugin-api.ts';
import { claudeCodeBody, codexBody } from './agent-bodies.ts';
import { timePerCall } from './time-per-call.ts';

const seconds = Number(process.argv[2] ?? 1);

const route = { upstreamModel: 'upstream-model' } as Route;
const routed = (canonical: CanonicalRequest): CanonicalRequest => Object.assign({}, canonical, { model: 'upstream-model', stream: true });
const cases: Array<[string, unknown]> = [
  ['Codex turn -> Messages', encodeForMessages('anthropic.messages', routed(responsesCodec.decodeRequest(JSON.parse(codexBody(400_000).toString()))), route)],
  ['Claude Code turn -> Chat', encodeForChat('openai.chat', routed(messagesCodec.decodeRequest(JSON.parse(claudeCodeBody(400_000).toString()))), route)],
];

console.log('reading                     KB   toString+JSON.parse   in pieces');
for (const [name, raw] of [['Codex turn', codexBody(400_000)], ['Claude Code turn', claudeCodeBody(400_000)]] as const) {
  if (JSON.stringify(parseInPieces(raw)) !== JSON.stringify(JSON.parse(raw.toString('utf8')))) throw new Error(`${name}: parsed differently`);
  const before = timePerCall(() => JSON.parse(raw.toString('utf8')), seconds, 1);
  const after = timePerCall(() => parseInPieces(raw), seconds, 1);
  console.log(`${name.padEnd(26)} ${String(Math.round(raw.length / 1024)).padStart(4)}   ${before.toFixed(0).padStart(16)} us   ${after.toFixed(0).padStart(6)} us`);
}

console.log('\nwriting                     KB   JSON.stringify+Buffer.from   parts   parts');
for (const [name, request] of cases) {
  const whole = Buffer.from(JSON.stringify(request));
  const parts = stringifyToParts(request);
  if (!Buffer.concat(parts.parts).equals(whole)) throw new Error(`${name}: the parts differ from JSON.stringify`);
  const before = timePerCall(() => Buffer.from(JSON.stringify(request)), seconds, 1);
  const after = timePerCall(() => stringifyToParts(request), seconds, 1);
  console.log(`${name.padEnd(26)} ${String(Math.round(whole.length / 1024)).padStart(4)}   ${before.toFixed(0).padStart(20)} us   ${after.toFixed(0).padStart(5)} us   ${parts.parts.length}`);
}
