// What the passthrough tap reads from a stream's end: usage from the last frames of long streams,
// usage frames split across writes, and an in-stream error
// after output, which reaches the client as the upstream sent it and is recorded as one.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, sseFrame, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

/** A long stream: well past what one socket read holds. */
const STREAM_TAIL_BYTES = 256 * 1024;
const SSE = { 'content-type': 'text/event-stream' };
const CHAT = 'gpt-stream-end';
const CLAUDE = 'claude-stream-end';
const chatRoute = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: CHAT });
const claudeRoute = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: CLAUDE });
await settled(relay, (s) => s.relayKeys.has(chatRoute.relayKeyId) && s.relayKeys.has(claudeRoute.relayKeyId)
  && [...s.models.values()].filter((m) => m.metadata.slug === CHAT || m.metadata.slug === CLAUDE).length === 2);

const chatBody = { model: CHAT, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] };
const claudeBody = { model: CLAUDE, stream: true, max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }] };
const longText = 'many words in a long answer '.repeat(2000);

/** A frame's bytes written a few at a time: the usage frame arrives in many TCP writes. */
function inPieces(frame: string, size = 7): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < frame.length; i += size) pieces.push(frame.slice(i, i + size));
  return pieces;
}

t.test('Chat Completions: usage read from the end of a stream far longer than the tail kept', async (t) => {
  const frames = openai.chatChunks({ model: CHAT, text: longText, chunks: 3000, inputTokens: 4321, outputTokens: 3000, includeUsage: true });
  const bytes = Buffer.byteLength(frames.join(''));
  t.ok(bytes > 2 * STREAM_TAIL_BYTES, `the stream (${bytes} bytes) is longer than the tail`);
  up.enqueue({ headers: SSE, frames: [...frames.slice(0, -2), ...inPieces(frames.at(-2)!), frames.at(-1)!] });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', chatRoute.relayKey, chatBody);
  t.equal(got.status, 200);
  t.ok(got.text === frames.join(''), 'the client got the stream byte for byte');
  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.match(record, { status: 200, error_code: null, input_tokens: 4321, output_tokens: 3000 });
});

t.test('Anthropic Messages: message_start read while holding, message_delta from the end', async (t) => {
  const frames = anthropic.events({ model: CLAUDE, text: longText, chunks: 3000, inputTokens: 777, outputTokens: 2999 });
  const bytes = Buffer.byteLength(frames.join(''));
  t.ok(bytes > STREAM_TAIL_BYTES, `the stream (${bytes} bytes) is longer than the tail`);
  const delta = frames.findIndex((f) => f.startsWith('event: message_delta'));
  up.enqueue({ headers: SSE, frames: [...frames.slice(0, delta), ...inPieces(frames[delta]!, 3), ...frames.slice(delta + 1)] });
  const got = await viaRelay(relay, '/vendor-b/v1/messages', claudeRoute.relayKey, claudeBody);
  t.equal(got.status, 200);
  t.ok(got.text === frames.join(''), 'byte for byte');
  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.match(record, { status: 200, error_code: null, input_tokens: 777, output_tokens: 2999 });
});

t.test('a short stream in one write: the hold read it all, the end agrees', async (t) => {
  const frames = openai.chatChunks({ model: CHAT, chunks: 3, inputTokens: 9, outputTokens: 3, includeUsage: true });
  up.enqueue({ headers: SSE, frames: [frames.join('')] });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', chatRoute.relayKey, chatBody);
  t.equal(got.text, frames.join(''));
  t.match(await usageRecord(relay, got.headers.get('x-request-id')!), { input_tokens: 9, output_tokens: 3, error_code: null });
});

// An error after output cannot fail over (bytes reached the client); it passes as sent, and the
// usage record must not read as a success.
const errorCases = [
  {
    name: 'Chat Completions error chunk',
    path: '/vendor-a/v1/chat/completions',
    key: () => chatRoute.relayKey,
    body: chatBody,
    frames: () => [...openai.chatChunks({ model: CHAT, chunks: 6 }).slice(0, 4),
      sseFrame({ data: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } })],
  },
  {
    name: 'Anthropic error event',
    path: '/vendor-b/v1/messages',
    key: () => claudeRoute.relayKey,
    body: claudeBody,
    frames: () => [...anthropic.events({ model: CLAUDE, chunks: 6 }).slice(0, 5),
      sseFrame({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } })],
  },
  {
    name: 'Responses error event (a stream the tap frames throughout)',
    path: '/vendor-a/v1/responses',
    key: () => chatRoute.relayKey,
    body: { model: CHAT, stream: true, input: 'hi' },
    frames: () => [...openai.responseEvents({ model: CHAT, chunks: 6 }).slice(0, 6),
      sseFrame({ event: 'error', data: { type: 'error', code: 'server_error', message: 'The model failed to generate a response.', param: null, sequence_number: 6 } })],
  },
];

for (const c of errorCases) {
  t.test(`${c.name} after output: passed on as sent, recorded as upstream_stream_error`, async (t) => {
    const frames = c.frames();
    // Apart in time, so that the output reached the client before the error came (else the
    // hold would see both, and that is failover's ground).
    up.enqueue({ headers: SSE, frames, delayMs: 25 });
    const got = await viaRelay(relay, c.path, c.key(), c.body);
    t.equal(got.status, 200, 'the stream had started');
    t.ok(got.text === frames.join(''), 'the client got the bytes as the upstream sent them');
    const record = await usageRecord(relay, got.headers.get('x-request-id')!);
    t.match(record, { status: 200, error_code: 'upstream_stream_error', attempts: 1 });
  });
}

t.test('an error in the same read as the first output still fails over: nothing reached the client yet', async (t) => {
  const model = 'gpt-stream-end-failover';
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model, hostKeys: ['sk-end-one', 'sk-end-two'] });
  await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.hostKeysOfHost(route.hostId).length === 2
    && [...s.models.values()].some((m) => m.metadata.slug === model));
  const failing = [...openai.chatChunks({ model, chunks: 6 }).slice(0, 3),
    sseFrame({ data: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } })];
  const good = openai.chatChunks({ model, chunks: 4, includeUsage: true, inputTokens: 5, outputTokens: 4 });
  const before = up.count;
  up.enqueue({ headers: SSE, frames: [failing.join('')] });
  up.enqueue({ headers: SSE, frames: good });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { ...chatBody, model });
  t.equal(up.count - before, 2, 'the second key was tried');
  t.ok(got.text === good.join(''), "the client got the second key's stream only");
  t.match(await usageRecord(relay, got.headers.get('x-request-id')!), { status: 200, error_code: null, attempts: 2, input_tokens: 5, output_tokens: 4 });
});
