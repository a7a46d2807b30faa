// Converse answer blocks beyond text, tool use and reasoning, over real HTTP through Relay to the fake
// Bedrock runtime (SigV4 checked, event-stream framing): mapped or named, never dropped in silence.
// An image reaches a canonical client as an image part and is named `image` for a Chat client, whose
// answer has no place for it; document, video and guard content blocks are named by their Converse
// key; a citationsContent block's text is kept and its citations named; a streamed block of a kind
// Relay does not know is named in the header or, once the head went, in an x-relay-dropped trailer.
import t from 'tap';
import http from 'node:http';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeBedrock, type BedrockAction, type StreamMessage } from '../support/fake-bedrock.ts';
import { parseSse } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';

const KEY = { accessKeyId: 'AKIAE2EBEDROCKPARTS1', secretAccessKey: 'e2e/Parts+Secret0123456789abcdefghijklmn' };
const REGION = 'us-west-2';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const USAGE = { inputTokens: 9, outputTokens: 20, totalTokens: 29 };

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-bedrock' }] });
const bedrock = await startFakeBedrock({ keys: [KEY], region: REGION });
t.teardown(async () => { await relay.close(); await bedrock.close(); });

const seeded = await seedRoute(relay, {
  baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model: 'bedrock-parts', upstreamModel: 'amazon.nova-pro-v1:0',
  hostKeys: [`${KEY.accessKeyId}:${KEY.secretAccessKey}`], hostOptions: { region: REGION, endpoint: bedrock.url }, shapes: ['bedrock.converse'],
});
await routeLive(relay, seeded);

let next: BedrockAction | null = null;
bedrock.script(() => next ?? undefined);

/** Text, an image, a document, guard content and a cited passage: one non-streamed Converse answer. */
const MIXED = {
  output: { message: { role: 'assistant', content: [
    { text: 'Here is the chart.' },
    { image: { format: 'png', source: { bytes: PNG } } },
    { document: { format: 'txt', name: 'notes', source: { bytes: 'bm90ZXM=' } } },
    { guardContent: { text: { text: 'checked', qualifiers: ['guard_content'] } } },
    { citationsContent: { content: [{ text: 'Sales rose 4%.' }], citations: [{ title: 'report', sourceContent: [{ text: 'rose 4%' }], location: { documentChar: { documentIndex: 0, start: 10, end: 17 } } }] } },
  ] } },
  stopReason: 'end_turn', usage: USAGE,
};

interface Answer { status: number; headers: http.IncomingHttpHeaders; trailers: NodeJS.Dict<string>; body: string }

/** A POST read with node:http, which exposes trailers (fetch does not). */
function post(path: string, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(`${relay.inferenceUrl}${path}`), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.relayKey}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const names = (value: string | undefined): string[] => (value ?? '').split(', ').filter((n) => n !== '').sort();
const chat = (stream = false) => post('/vendor-a/v1/chat/completions', {
  model: 'bedrock-parts', messages: [{ role: 'user', content: 'Chart the sales.' }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
});

t.test('Chat client: the image its shape cannot carry and the blocks canonical has no place for are named', async (t) => {
  next = { kind: 'json', body: MIXED };
  const res = await chat();
  t.equal(res.status, 200, res.body.slice(0, 300));
  t.same(names(res.headers['x-relay-dropped'] as string), ['citations', 'document', 'guardContent', 'image']);
  t.equal(JSON.parse(res.body).choices[0].message.content, 'Here is the chart.\n\nSales rose 4%.', 'the cited text is kept');
  t.notMatch(res.body, PNG, 'no image bytes in a shape without a place for them');
  t.equal(bedrock.requests.at(-1)!.operation, 'converse');
});

t.test('canonical client: the image arrives as an image part; the rest is named', async (t) => {
  next = { kind: 'json', body: MIXED };
  const res = await post('/v1/generate', { model: 'bedrock-parts', messages: [{ role: 'user', content: [{ type: 'text', text: 'Chart the sales.' }] }] });
  t.equal(res.status, 200, res.body.slice(0, 300));
  t.same(names(res.headers['x-relay-dropped'] as string), ['citations', 'document', 'guardContent'], 'the image is not named: canonical carries it');
  t.same(JSON.parse(res.body).content, [
    { type: 'text', text: 'Here is the chart.' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    { type: 'text', text: 'Sales rose 4%.' },
  ]);
});

t.test('a streamed block of a kind Relay does not know is named once, after the text it follows', async (t) => {
  const events: StreamMessage[] = [
    { event: 'messageStart', payload: { role: 'assistant' } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Before. ' } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { event: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { hologram: { format: 'h3d' } } } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { hologram: { frame: 'AAAA' } } } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { hologram: { frame: 'BBBB' } } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 1 } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 2, delta: { text: 'After.' } } },
    { event: 'contentBlockStop', payload: { contentBlockIndex: 2 } },
    { event: 'messageStop', payload: { stopReason: 'end_turn' } },
    { event: 'metadata', payload: { usage: USAGE, metrics: { latencyMs: 5 } } },
  ];
  next = { kind: 'events', messages: events, chunkBytes: 60 };
  const res = await chat(true);
  t.equal(res.status, 200, res.body.slice(0, 300));
  t.equal(bedrock.requests.at(-1)!.operation, 'converse-stream');
  t.equal(res.trailers['x-relay-dropped'] ?? res.headers['x-relay-dropped'], 'hologram', 'named once, in the trailer or the header');
  const text = parseSse(res.body).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data).choices[0]?.delta?.content ?? '').join('');
  t.equal(text, 'Before. \n\nAfter.', 'the text on either side, two parts');
});
