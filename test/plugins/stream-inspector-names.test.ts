// The passthrough tap does not decode frames an inspector names in `outputEvents` (core/http/sse.ts,
// skipData). That is only right if inspect() would have called each of them `output` and read no
// usage from it: checked here on the fake upstream's streams (text, tool calls, reasoning-free and
// custom tools), frame by frame, against inspect() on every frame.
import t from 'tap';
import { SseParser, type StreamInspector } from '../../core/plugin-api.ts';
import { anthropic, openai, type BodyOptions } from '../support/fake-upstream.ts';
import { messagesStreamInspector } from '../../plugins/vendor-anthropic/codec/messages-inspector.ts';
import { responsesStreamInspector } from '../../plugins/vendor-openai/codec/responses-inspector.ts';

type Kind = 'opening' | 'output' | 'error';

/** The kinds of every frame and the usage at the end, with the tap's skipping or without it. */
function tap(frames: string[], makeInspector: () => StreamInspector, skip: boolean): { kinds: Kind[]; usage: unknown; skipped: number } {
  const inspector = makeInspector();
  const kinds: Kind[] = [];
  let skipped = 0;
  const parser = new SseParser((event, data) => kinds.push(inspector.inspect(event, data)), skip
    ? { skipData: inspector.outputEvents, onSkipped: () => { skipped++; kinds.push('output'); } }
    : {});
  for (const frame of frames) parser.feed(Buffer.from(frame));
  parser.end();
  return { kinds, usage: inspector.usage(), skipped };
}

const bodies: Array<[string, BodyOptions]> = [
  ['text', { model: 'm', chunks: 7, inputTokens: 31, outputTokens: 9 }],
  ['a function call', { model: 'm', chunks: 4, toolCall: { name: 'shell', input: { command: ['ls', '-la'] } } }],
  ['a custom tool call', { model: 'm', chunks: 3, toolCall: { name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' } }],
];

for (const [vendor, makeInspector, framesOf] of [
  ['Anthropic Messages', messagesStreamInspector, (o: BodyOptions) => anthropic.events(o)],
  ['OpenAI Responses', responsesStreamInspector, (o: BodyOptions) => openai.responseEvents(o)],
] as const) {
  t.test(`${vendor}: the frames told by name are classified and counted as inspect() does`, async (t) => {
    t.ok((makeInspector().outputEvents?.size ?? 0) > 0, 'the inspector names some frames');
    for (const [name, body] of bodies) {
      const frames = framesOf(body);
      const every = tap(frames, makeInspector, false);
      const skipping = tap(frames, makeInspector, true);
      t.same(skipping.kinds, every.kinds, `${name}: the same kind for every frame`);
      t.same(skipping.usage, every.usage, `${name}: the same usage`);
      t.not(every.usage, null, `${name}: usage is read`);
      t.ok(skipping.skipped >= frames.length / 2, `${name}: ${skipping.skipped} of ${frames.length} frames were not decoded`);
    }
  });
}
