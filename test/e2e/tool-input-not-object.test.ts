// A tool call's input that is not an object, from a broken or hostile Anthropic or Gemini upstream,
// over real HTTP through Relay to a canonical client (/v1/generate), whole and streamed, to a
// function and to a custom tool. Each decoder reads it as the Bedrock and OpenAI ones do
// (toolArgumentsText): text as the arguments as it is, an array as its JSON, a number or a boolean
// named in x-relay-dropped (`tool_use.input`, `functionCall.args`) and read as no input. Anthropic
// and Gemini passed 42 on as the text "42" and a string JSON-encoded again, naming nothing; a
// streamed partial_json that was not text was lost unnamed.
import t from 'tap';
import http from 'node:http';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeGoogle } from '../support/fake-google.ts';
import { startFakeUpstream, type SseFrame } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const GOOGLE_KEY = 'AIza-fake-tool-input';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-google' }] });
const anthropicUp = await startFakeUpstream();
const google = await startFakeGoogle({ apiKey: GOOGLE_KEY });
t.teardown(async () => {
  await relay.close();
  await anthropicUp.close();
  await google.close();
});

const routes = {
  anthropic: await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'input-claude' }),
  gemini: await seedRoute(relay, { baseUrl: `${google.url}/v1beta`, adapter: 'google', model: 'input-gemini', upstreamModel: 'gemini-2.5-flash', hostKeys: [GOOGLE_KEY] }),
};
for (const seeded of Object.values(routes)) await routeLive(relay, seeded);

type Kind = 'function' | 'custom';
const nameFor = (kind: Kind) => (kind === 'custom' ? 'apply_patch' : 'lookup');
const TOOLS: Record<Kind, unknown> = {
  function: { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  custom: { type: 'custom', name: 'apply_patch' },
};

interface Read { status: number; body: string; arguments?: string; dropped: string[] }

/** A /v1/generate call with the one tool; the tool call's arguments and the names in x-relay-dropped (header or trailer). */
function generate(route: keyof typeof routes, kind: Kind, stream: boolean): Promise<Read> {
  const body = { model: routes[route].modelSlug, stream, messages: [{ role: 'user', content: [{ type: 'text', text: 'Go.' }] }], tools: [TOOLS[kind]] };
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(`${relay.inferenceUrl}/v1/generate`), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${routes[route].relayKey}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const named = (res.trailers['x-relay-dropped'] ?? res.headers['x-relay-dropped'] ?? '') as string;
        const read: Read = { status: res.statusCode ?? 0, body: text, dropped: named.split(', ').filter((n) => n !== '').sort() };
        if (read.status === 200) read.arguments = stream ? streamedArguments(text) : JSON.parse(text).content.find((p: { type: string }) => p.type === 'tool_call')?.arguments;
        resolve(read);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function streamedArguments(text: string): string | undefined {
  let args: string | undefined;
  for (const frame of sseFrames(text)) {
    const e = JSON.parse(frame.data);
    if (e.type === 'part_start' && e.part.type === 'tool_call') args = '';
    if (e.type === 'delta' && e.delta.type === 'arguments' && args !== undefined) args += e.delta.text;
  }
  return args;
}

// --- Upstream answers: one call whose input is `input` ------------------------------------------

const claudeUse = (kind: Kind, input: unknown) => ({ type: 'tool_use', id: 'toolu_1', name: nameFor(kind), input });
const claudeAnswer = (kind: Kind, input: unknown) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'input-claude', content: [claudeUse(kind, input)], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 2 },
});
/** The call streamed: `start` as the block's input, then `partials` as its input_json_delta pieces. */
const claudeFrames = (kind: Kind, start: unknown, partials: unknown[]): SseFrame[] => [
  { event: 'message_start', data: { type: 'message_start', message: { ...claudeAnswer(kind, {}), content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: claudeUse(kind, start) } },
  ...partials.map((partial_json): SseFrame => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } } })),
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 2 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
];

/** Each path a tool call's input reaches canonical by, the name its decoder gives, and how to make the upstream answer with `input`. */
const PATHS: Record<string, { route: keyof typeof routes; stream: boolean; name: string; arrange: (kind: Kind, input: unknown) => void }> = {
  'Anthropic Messages, whole answer': { route: 'anthropic', stream: false, name: 'tool_use.input', arrange: (kind, input) => anthropicUp.enqueue({ body: claudeAnswer(kind, input) }) },
  'Anthropic Messages, streamed (the input at the block start)': {
    route: 'anthropic', stream: true, name: 'tool_use.input', arrange: (kind, input) => anthropicUp.enqueueStream({ frames: claudeFrames(kind, input, []) }),
  },
  'Anthropic Messages, streamed (the input as partial_json)': {
    route: 'anthropic', stream: true, name: 'tool_use.input', arrange: (kind, input) => anthropicUp.enqueueStream({ frames: claudeFrames(kind, {}, input === undefined ? [] : [input]) }),
  },
  'Gemini, whole answer': { route: 'gemini', stream: false, name: 'functionCall.args', arrange: (kind, input) => google.setAnswerParts([{ functionCall: { name: nameFor(kind), args: input } }]) },
  'Gemini, streamed': { route: 'gemini', stream: true, name: 'functionCall.args', arrange: (kind, input) => google.setAnswerParts([{ functionCall: { name: nameFor(kind), args: input } }]) },
};

/** No input, as each kind reads it: a function's arguments {}, a custom tool's empty text. */
const NONE: Record<Kind, string> = { function: '{}', custom: '' };
/** What the upstream sends, and what canonical carries for it. */
const INPUTS: Array<{ label: string; input: (kind: Kind) => unknown; expect: (kind: Kind) => string; named: boolean }> = [
  { label: 'a number', input: () => 42, expect: (k) => NONE[k], named: true },
  { label: 'zero', input: () => 0, expect: (k) => NONE[k], named: true },
  { label: 'a boolean', input: () => true, expect: (k) => NONE[k], named: true },
  { label: 'text', input: (k) => (k === 'custom' ? '*** Begin Patch' : '{"q":"x"}'), expect: (k) => (k === 'custom' ? '*** Begin Patch' : '{"q":"x"}'), named: false },
  { label: 'an array', input: () => ['a'], expect: () => '["a"]', named: false },
  { label: 'null', input: () => null, expect: (k) => NONE[k], named: false },
  { label: 'nothing', input: () => undefined, expect: (k) => NONE[k], named: false },
  { label: 'an object', input: (k) => (k === 'custom' ? { input: '*** Begin Patch' } : { q: 'x' }), expect: (k) => (k === 'custom' ? '*** Begin Patch' : '{"q":"x"}'), named: false },
];

for (const [path, p] of Object.entries(PATHS)) {
  for (const kind of ['function', 'custom'] as const) {
    t.test(`${path}, ${kind} tool`, async (t) => {
      for (const { label, input, expect, named } of INPUTS) {
        p.arrange(kind, input(kind));
        const got = await generate(p.route, kind, p.stream);
        t.equal(got.status, 200, got.status === 200 ? `${label}: answered` : `${label}: ${got.body.slice(0, 300)}`);
        t.equal(got.arguments, expect(kind), `${label}: arguments ${JSON.stringify(expect(kind))}`);
        t.same(got.dropped, named ? [p.name] : [], named ? `${label}: named ${p.name}` : `${label}: named nowhere`);
      }
    });
  }
}

// A start input that is not {} followed by input_json_delta pieces: Anthropic's SDK reads the
// pieces alone (an empty one alone is {}), and the start's input only when none comes. Relay sent
// the start's input and the pieces concatenated: two JSON documents, arguments no client parses.
t.test('Anthropic Messages, streamed: a start input then pieces, read as Anthropic\'s SDK reads it', async (t) => {
  const OLD: Record<Kind, unknown> = { function: { q: 'old' }, custom: { input: 'old patch' } };
  const NEW: Record<Kind, { pieces: string[]; text: string }> = {
    function: { pieces: ['{"q":', '"new"}'], text: '{"q":"new"}' },
    custom: { pieces: ['{"input":', '"new patch"}'], text: 'new patch' },
  };
  for (const kind of ['function', 'custom'] as const) {
    const cases: Array<[string, string[], string]> = [
      ['the pieces', NEW[kind].pieces, NEW[kind].text],
      ['no piece', [], kind === 'custom' ? 'old patch' : '{"q":"old"}'],
      ['one empty piece', [''], NONE[kind]],
    ];
    for (const [label, pieces, expected] of cases) {
      anthropicUp.enqueueStream({ frames: claudeFrames(kind, OLD[kind], pieces) });
      const got = await generate('anthropic', kind, true);
      t.equal(got.status, 200, `${kind}, ${label}: answered`);
      t.equal(got.arguments, expected, `${kind}, ${label}: arguments ${JSON.stringify(expected)}`);
    }
  }
});
