// plainTextDelta (plugins/vendor-anthropic/codec/text-delta.ts) reads Anthropic's text-delta frames
// without JSON.parse. It must never disagree with JSON.parse: whatever it reads, JSON.parse reads
// the same; whatever it leaves (null), the decoder parses. Checked on Anthropic's own frames, on
// frames that differ from them in one way each, and on random texts; and the stream decoder's
// events with the fast path against the same stream with every frame forced through JSON.parse.
import t from 'tap';
import { plainTextDelta } from '../../plugins/vendor-anthropic/codec/text-delta.ts';
import { messagesStreamDecoder } from '../../plugins/vendor-anthropic/codec/messages-stream.ts';
import type { Route } from '../../core/plugin-api.ts';
import type { StreamEvent } from '../../core/plugin-api/canonical.ts';

const frame = (index: number, text: string) => JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });

/** What JSON.parse makes of a frame, in plainTextDelta's terms (null: not a text delta). */
function reference(data: string): { index: number; text: string } | null {
  let f: any;
  try {
    f = JSON.parse(data);
  } catch {
    return null;
  }
  return f?.type === 'content_block_delta' && f.delta?.type === 'text_delta' && typeof f.delta.text === 'string' && typeof f.index === 'number'
    ? { index: f.index, text: f.delta.text }
    : null;
}

t.test('reads Anthropic text deltas as JSON.parse does', async (t) => {
  for (const [index, text] of [[0, 'Hello'], [3, ' world'], [12, ''], [123456789, 'x'], [0, 'héllo 🌍 ✓'], [1, "it's {} [] , : }}"]] as const) {
    const data = frame(index, text);
    t.same(plainTextDelta(data), { index, text }, data);
  }
});

t.test('leaves to JSON.parse every frame it cannot read exactly', async (t) => {
  const left = [
    frame(0, 'line\nbreak'), frame(0, 'a "quote"'), frame(0, 'back\\slash'), frame(0, 'tab\there'), frame(0, '\u0001'),
    frame(1234567890, 'big index'),
    '{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"leading zero"}}',
    '{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"negative"}}',
    '{"type":"content_block_delta","index":1.5,"delta":{"type":"text_delta","text":"fraction"}}',
    '{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"no index"}}',
    '{"type": "content_block_delta","index":0,"delta":{"type":"text_delta","text":"whitespace"}}',
    '{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"key order"}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"other delta"}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"extra"},"x":1}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}} ',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}}',
    '{"type":"ping"}', '', 'not json',
  ];
  for (const data of left) t.equal(plainTextDelta(data), null, data);
});

t.test('never disagrees with JSON.parse on random texts and damaged frames', async (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const alphabet = ['a', 'Z', ' ', '"', '\\', '\n', '}', '{', ',', ':', 'é', '🌍', '\u0000', '\u001f', '0'];
  let read = 0;
  for (let n = 0; n < 5000; n++) {
    let text = '';
    for (let k = Math.floor(random() * 12); k > 0; k--) text += alphabet[Math.floor(random() * alphabet.length)];
    let data = frame(Math.floor(random() * 20), text);
    if (random() < 0.3) {
      // One byte changed, dropped or added somewhere.
      const at = Math.floor(random() * data.length);
      const c = alphabet[Math.floor(random() * alphabet.length)]!;
      const edit = Math.floor(random() * 3);
      data = edit === 0 ? data.slice(0, at) + c + data.slice(at + 1) : edit === 1 ? data.slice(0, at) + data.slice(at + 1) : data.slice(0, at) + c + data.slice(at);
    }
    const fast = plainTextDelta(data);
    if (fast === null) continue;
    read++;
    if (JSON.stringify(fast) !== JSON.stringify(reference(data))) t.fail(`disagrees on ${JSON.stringify(data)}: ${JSON.stringify(fast)}`);
  }
  t.ok(read > 500, `read ${read} of 5000 frames without JSON.parse`);
});

t.test('the decoder gives the same events with the fast path as with JSON.parse alone', async (t) => {
  const route = { upstreamModel: 'claude' } as Route;
  const frames = [
    '{"type":"message_start","message":{"id":"msg_1","model":"claude","usage":{"input_tokens":5,"output_tokens":1}}}',
    '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    frame(0, 'Hello'), frame(0, ''), frame(0, ', "world"\n'), frame(5, 'no such block'),
    '{"type":"content_block_stop","index":0}',
    '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
    frame(1, 'second block'),
    '{"type":"content_block_stop","index":1}',
    frame(1, 'after its stop'),
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}',
    '{"type":"message_stop"}',
    frame(0, 'after the end'),
  ];
  const run = (transform: (data: string) => string) => {
    const decoder = messagesStreamDecoder(route);
    const events: StreamEvent[] = [];
    for (const data of frames) events.push(...decoder.decode(undefined, transform(data)));
    events.push(...decoder.finish());
    return events;
  };
  // A space after the opening brace is still JSON, but no longer Anthropic's exact bytes: every frame goes through JSON.parse.
  const parsedOnly = run((data) => data.replace(/^\{/, '{ '));
  const withFastPath = run((data) => data);
  t.same(withFastPath, parsedOnly);
  t.same(withFastPath.filter((e) => e.type === 'delta').map((e) => (e as any).delta.text), ['Hello', ', "world"\n', 'second block']);
});
