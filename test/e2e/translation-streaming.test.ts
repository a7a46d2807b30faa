// Translated streams arrive chunk by chunk and are well formed. The upstream writes its frames
// 50 ms apart; the client must read the first text delta well before the upstream has finished
// (no buffering of whole responses), and what it reads must be valid in its own shape: OpenAI
// chunks and events against OpenAI's OpenAPI description, Anthropic streams through the
// official SDK's stream helper, canonical events by their type.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, splitText, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { openapiProblems, responseStreamEventSchema } from '../support/openapi-schemas.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';
import { readTimed, timedStream } from '../support/timed-stream.ts';

const TEXT = 'Streaming arrives piece by piece through Relay, chunk after chunk, never all at once.';
const CHUNKS = 6;
const EVERY_MS = 50;
const FIRST_PIECE = splitText(TEXT, CHUNKS)[0]!.trim();

const relay = await startRelay();
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});

type UpstreamShape = 'messages' | 'chat' | 'responses';

async function route(model: string, shape: UpstreamShape) {
  const up = await startFakeUpstream();
  upstreams.push(up);
  const adapter = shape === 'messages' ? 'anthropic' : 'openai';
  const shapes = shape === 'chat' ? ['openai.chat'] : shape === 'responses' ? ['openai.responses'] : undefined;
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter, model, policy: { modelIds: '*' }, ...(shapes ? { shapes } : {}) });
  return { up, model, shape, seeded };
}

const routes = { messages: await route('claude-up', 'messages'), chat: await route('chat-only-up', 'chat'), responses: await route('responses-only-up', 'responses') };
await settled(relay, (s) => Object.values(routes).every((r) => s.relayKeys.has(r.seeded.relayKeyId)) && s.models.size >= 3);
const key = routes.messages.seeded.relayKey;

function upstreamFrames(shape: UpstreamShape, model: string): string[] {
  const body = { model, text: TEXT, chunks: CHUNKS };
  if (shape === 'messages') return anthropic.events(body);
  if (shape === 'chat') return openai.chatChunks({ ...body, includeUsage: true });
  return openai.responseEvents(body);
}

type Client = 'chat' | 'responses' | 'messages' | 'canonical';

const CLIENTS: Record<Client, { path: string; body: (model: string) => object }> = {
  chat: { path: '/vendor-a/v1/chat/completions', body: (model) => ({ model, stream: true, messages: [{ role: 'user', content: 'Stream, please.' }] }) },
  responses: { path: '/vendor-a/v1/responses', body: (model) => ({ model, stream: true, input: 'Stream, please.' }) },
  messages: { path: '/vendor-b/v1/messages', body: (model) => ({ model, stream: true, max_tokens: 256, messages: [{ role: 'user', content: 'Stream, please.' }] }) },
  canonical: { path: '/v1/generate', body: (model) => ({ model, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'Stream, please.' }] }] }) },
};

/** The text the client's stream carries, after checking every frame in the client's shape. */
async function checkedText(client: Client, sse: string, problems: string[]): Promise<string> {
  const frames = sseFrames(sse);
  if (client === 'messages') {
    const message = await sdkFinalMessage(sse);
    return message.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('');
  }
  if (client === 'chat') {
    if (frames.at(-1)?.data !== '[DONE]') problems.push('the stream does not end with [DONE]');
    let text = '';
    for (const f of frames.slice(0, -1)) {
      const chunk = JSON.parse(f.data);
      problems.push(...openapiProblems('CreateChatCompletionStreamResponse', chunk).map((p) => `chunk: ${p}`));
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    return text;
  }
  const events = frames.map((f) => JSON.parse(f.data));
  if (client === 'responses') {
    for (const e of events) problems.push(...openapiProblems(responseStreamEventSchema(e.type), e).map((p) => `${e.type}: ${p}`));
    return events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  }
  return events.filter((e) => e.type === 'delta' && e.delta.type === 'text').map((e) => e.delta.text).join('');
}

const CASES: Array<[Client, UpstreamShape]> = [
  ['chat', 'messages'], ['chat', 'responses'],
  ['responses', 'messages'], ['responses', 'chat'],
  ['messages', 'chat'], ['messages', 'responses'],
  ['canonical', 'messages'],
];

for (const [client, upstream] of CASES) {
  t.test(`${client} client <- ${upstream} upstream: chunk by chunk, valid in the client's shape`, async (t) => {
    const r = routes[upstream];
    const timed = timedStream(upstreamFrames(upstream, r.model), EVERY_MS);
    r.up.enqueue(timed.action);
    const res = await fetch(`${relay.inferenceUrl}${CLIENTS[client].path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(CLIENTS[client].body(r.model)),
    });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/event-stream/);
    const reads = await readTimed(res);
    const upstreamDone = await timed.finishedAt;
    const firstDelta = reads.find((x) => x.text.includes(FIRST_PIECE));
    if (!firstDelta) return t.fail(`no read carries "${FIRST_PIECE}"`);
    const ahead = upstreamDone - firstDelta.at;
    t.ok(ahead > 2 * EVERY_MS, `the first delta reached the client ${Math.round(ahead)} ms before the upstream finished`);
    t.ok(reads.length >= CHUNKS, `the client read the stream in ${reads.length} pieces`);

    const problems: string[] = [];
    const text = await checkedText(client, reads.map((x) => x.text).join(''), problems);
    t.same(problems, [], 'every frame is valid in the client\'s shape');
    t.equal(text, TEXT, 'the deltas add up to the upstream\'s text');
  });
}
