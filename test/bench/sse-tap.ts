// Microbench of the passthrough tap (what reading usage from a streamed answer costs Relay's CPU
// besides the proxying): the fake upstream's 20-chunk Chat Completions, Anthropic Messages and
// Responses streams (and 200-chunk ones, an agent's turn), parsed by the kernel's SseParser and, for
// comparison, by eventsource-parser behind a streaming TextDecoder (what the kernel used before),
// alone and with the vendor's stream inspector (SseParser skipping the frames the inspector names
// in outputEvents, as the tap does). Fed frame by frame (one upstream write each) and as one chunk.
// Then the tap as passthrough runs it (StreamTap: the hold frames chunks until output, then the
// chunks pass, then finish() reads the end), with the inspector's inspectFromEnd and without it
// (every frame framed, as before stream-tail.ts). Prints microseconds per stream.
//   npx tsx test/bench/sse-tap.ts [STREAMS=50000]
import { createParser } from 'eventsource-parser';
import { SseParser } from '../../core/http/sse.ts';
import { StreamTap } from '../../core/pipeline/stream-tap.ts';
import type { StreamInspector } from '../../core/plugin-api.ts';
import { openai, anthropic } from '../support/fake-upstream.ts';
import { chatStreamInspector } from '../../plugins/vendor-openai/codec/chat-inspector.ts';
import { messagesStreamInspector } from '../../plugins/vendor-anthropic/codec/messages-inspector.ts';
import { responsesStreamInspector } from '../../plugins/vendor-openai/codec/responses-inspector.ts';

const streams = Number(process.argv[2] ?? 50_000);

type OnEvent = (event: string | undefined, data: string) => void;
interface Parser { feed(chunk: Buffer): void; end(): void }
/** The inspector's frames told by name (SseParser skips them as the passthrough tap does). */
type Skip = { skipData?: ReadonlySet<string>; onSkipped?: (event: string) => void };

/** The kernel's parser before: text decoding first, then eventsource-parser's line handling. */
function textParser(onEvent: OnEvent): Parser {
  const parser = createParser({ onEvent: (e) => onEvent(e.event, e.data) });
  const decoder = new TextDecoder();
  return {
    feed: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })),
    end: () => parser.feed(`${decoder.decode()}\n\n`),
  };
}

const parsers: Array<[string, (onEvent: OnEvent, skip?: Skip) => Parser]> = [
  ['eventsource-parser', (onEvent) => textParser(onEvent)],
  ['SseParser', (onEvent, skip) => new SseParser(onEvent, skip)],
];
const frames = (list: string[]) => list.map((f) => Buffer.from(f));
const cases: Array<[string, Buffer[], () => StreamInspector]> = [
  ['chat', frames(openai.chatChunks({ model: 'bench-gpt', chunks: 20, includeUsage: true })), chatStreamInspector],
  ['messages', frames(anthropic.events({ model: 'bench-claude', chunks: 20 })), messagesStreamInspector],
  ['responses', frames(openai.responseEvents({ model: 'bench-gpt', chunks: 20 })), responsesStreamInspector],
  // An agent's turn runs to hundreds of deltas.
  ['messages-200', frames(anthropic.events({ model: 'bench-claude', chunks: 200 })), messagesStreamInspector],
  ['responses-200', frames(openai.responseEvents({ model: 'bench-gpt', chunks: 200 })), responsesStreamInspector],
];

function timeUs(run: () => void): number {
  for (let i = 0; i < streams / 5; i++) run();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < streams; i++) run();
  return Number(process.hrtime.bigint() - t0) / streams / 1000;
}

console.log('case          feed             parser               parse us  +inspector us');
for (const [name, stream, inspector] of cases) {
  for (const [feedName, chunks] of [['frame by frame', stream], ['one chunk', [Buffer.concat(stream)]]] as const) {
    for (const [parserName, make] of parsers) {
      let sink = 0;
      const parseOnly = timeUs(() => {
        const p = make((_e, data) => { sink += data.length; });
        for (const c of chunks) p.feed(c);
        p.end();
      });
      const withInspector = timeUs(() => {
        const i = inspector();
        const p = make((e, data) => i.inspect(e, data), { skipData: i.outputEvents, onSkipped: () => {} });
        for (const c of chunks) p.feed(c);
        p.end();
        if (i.usage() === null) throw new Error(`${name}: no usage read`);
      });
      console.log(`${name.padEnd(13)} ${feedName.padEnd(16)} ${parserName.padEnd(20)} ${parseOnly.toFixed(2).padStart(8)}  ${withInspector.toFixed(2).padStart(13)}${sink < 0 ? '!' : ''}`);
    }
  }
}

/** The tap over one stream as passthrough drives it: hold() until output, pass() after, finish(). */
function tapStream(chunks: readonly Buffer[], inspector: StreamInspector): void {
  const tap = new StreamTap(inspector, () => {});
  let i = 0;
  while (i < chunks.length && tap.hold(chunks[i++]!) === 'opening');
  while (i < chunks.length) tap.pass(chunks[i++]!);
  if (tap.finish().usage === null) throw new Error('no usage read');
}

console.log('\ncase          feed             tap us: reading the end  framing every frame');
for (const [name, stream, inspector] of cases) {
  for (const [feedName, chunks] of [['frame by frame', stream], ['one chunk', [Buffer.concat(stream)]]] as const) {
    const fromEnd = timeUs(() => tapStream(chunks, inspector()));
    const framing = timeUs(() => tapStream(chunks, { ...inspector(), inspectFromEnd: undefined }));
    console.log(`${name.padEnd(13)} ${feedName.padEnd(16)} ${fromEnd.toFixed(2).padStart(23)}  ${framing.toFixed(2).padStart(19)}`);
  }
}
