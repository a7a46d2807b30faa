// An upstream SSE frame past the parser's 16 MiB bound (DEFAULT_MAX_SSE_FRAME_BYTES). On a
// passthrough stream the client still gets every byte and only the usage tap skips the frame; on
// a translated stream, which cannot translate what it cannot read, the client's stream ends with
// an error event in its own shape. Either way Relay does not buffer the frame.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { DEFAULT_MAX_SSE_FRAME_BYTES } from '../../core/http/sse.ts';
import { anthropic, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const MODEL = 'claude-oversize';
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: MODEL });
await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && [...s.models.values()].some((m) => m.metadata.slug === MODEL));

const huge = `event: ping\ndata: {"type":"ping","pad":"${'x'.repeat(DEFAULT_MAX_SSE_FRAME_BYTES)}"}\n\n`;
/** A Messages stream with the oversized frame after the first text delta (output has started). */
function framesWithHugeOne(): string[] {
  const frames = anthropic.events({ model: MODEL, text: 'one two three four', chunks: 4 });
  const firstDelta = frames.findIndex((f) => f.startsWith('event: content_block_delta'));
  return [...frames.slice(0, firstDelta + 1), huge, ...frames.slice(firstDelta + 1)];
}

t.test('passthrough: the client gets every byte; usage is still read from the frames after it', async (t) => {
  const frames = framesWithHugeOne();
  up.enqueue({ frames });
  const got = await viaRelay(relay, '/vendor-b/v1/messages', seeded.relayKey, { model: MODEL, stream: true, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 200);
  t.equal(got.bytes.length, Buffer.byteLength(frames.join('')), 'as many bytes as the upstream sent');
  t.ok(got.text === frames.join(''), 'the same bytes');
  const sent = sseFrames(frames.join('')).find((f) => f.event === 'message_delta')!;
  const { usage } = JSON.parse(sent.data) as { usage: { input_tokens: number; output_tokens: number } };
  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.match(record, { status: 200, error_code: null, input_tokens: usage.input_tokens, output_tokens: usage.output_tokens });
  t.ok(usage.output_tokens > 0);
});

t.test('translated to a Responses client: the stream ends with response.failed naming the cause', async (t) => {
  up.enqueue({ frames: framesWithHugeOne() });
  const got = await viaRelay(relay, '/vendor-a/v1/responses', seeded.relayKey, { model: MODEL, stream: true, input: 'hi' });
  t.equal(got.status, 200, 'the stream had started');
  const events = sseFrames(got.text).map((f) => ({ event: f.event, data: JSON.parse(f.data) }));
  t.ok(events.some((e) => e.event === 'response.output_text.delta'), 'the output before the frame arrived');
  const last = events.at(-1)!;
  t.equal(last.event, 'response.failed', 'ends as failed');
  t.match(last.data.response.error.message, /larger than 16777216 bytes/);
  t.ok(got.bytes.length < 100_000, `the frame was not passed on (${got.bytes.length} bytes)`);
  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.equal(record.error_code, 'upstream_stream_error');
});

t.test('translated, oversized before any output on the last candidate: the error is the stream', async (t) => {
  const frames = anthropic.events({ model: MODEL, text: 'never read', chunks: 2 });
  up.enqueue({ frames: [frames[0]!, huge, ...frames.slice(1)] });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  // As with any upstream error event before output on the last candidate (DESIGN.md "the first byte").
  t.equal(got.status, 200);
  const errors = sseFrames(got.text).map((f) => JSON.parse(f.data === '[DONE]' ? 'null' : f.data)).filter((d) => d?.error);
  t.match(errors, [{ error: { message: /larger than 16777216 bytes/ } }]);
  t.notMatch(got.text, /never/, 'no text from after the frame');
  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.equal(record.error_code, 'upstream_stream_error');
});
