// Property-based fuzzing of every inference route (fixed seed, bounded cases): valid-looking
// requests with fields set to wrong types, deleted, nulled, nested 10k levels deep, replaced by
// huge strings or invalid UTF-8, unknown fields, cut JSON, bare values. Each goes to a model bound
// to an OpenAI-shaped and to an Anthropic-shaped fake upstream (one passthrough, one translated
// for every route). Every answer must be a 2xx or a 4xx with a JSON error in the caller's shape,
// within a per-request timeout, and Relay stays healthy.
import fc from 'fast-check';
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { recordCounters } from './counters.ts';
import { hostileBody } from './hostile-bodies.ts';
import { judgeAnswer, type ErrorShape, type Finding } from './inference-answers.ts';

const SEED = 1101;
const CASES_PER_ROUTE_AND_MODEL = 60;
const REQUEST_TIMEOUT_MS = 15_000;

const logs: string[] = [];
const relay = await startRelay({
  plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }],
  logLevel: 'error',
  logStream: { write: (line: string) => { logs.push(line); } },
});
const openaiUp = await startFakeUpstream({ record: 5 });
const anthropicUp = await startFakeUpstream({ record: 5 });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

const viaOpenAI = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'fuzz-openai', policy: { modelIds: '*' } });
await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'fuzz-anthropic', policy: { modelIds: '*' } });
await settled(relay, (snap) => snap.relayKeys.has(viaOpenAI.relayKeyId) && snap.models.size >= 2);

type Valid = Record<string, any>;
const text = [{ role: 'user', content: 'hi' }];
const ROUTES: Array<{ path: string; shape: ErrorShape; valid: (model: string) => Valid; models: string[] }> = [
  {
    path: '/vendor-a/v1/chat/completions', shape: 'openai', models: ['fuzz-openai', 'fuzz-anthropic'],
    valid: (model) => ({ model, messages: [{ role: 'system', content: 'be brief' }, ...text, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'ok' }], max_tokens: 16, temperature: 0.5, stream: false, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] }),
  },
  {
    path: '/vendor-a/v1/responses', shape: 'openai', models: ['fuzz-openai', 'fuzz-anthropic'],
    valid: (model) => ({ model, instructions: 'be brief', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }], tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }], reasoning: { effort: 'low' }, stream: false }),
  },
  {
    path: '/vendor-a/v1/embeddings', shape: 'openai', models: ['fuzz-openai'],
    valid: (model) => ({ model, input: ['hi', 'there'], dimensions: 4 }),
  },
  {
    path: '/vendor-b/v1/messages', shape: 'anthropic', models: ['fuzz-anthropic', 'fuzz-openai'],
    valid: (model) => ({ model, max_tokens: 16, system: [{ type: 'text', text: 'be brief' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }], tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }], thinking: { type: 'enabled', budget_tokens: 1024 }, stream: false }),
  },
  {
    path: '/v1/generate', shape: 'canonical', models: ['fuzz-openai', 'fuzz-anthropic'],
    valid: (model) => ({ model, system: [{ type: 'text', text: 'be brief' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_output_tokens: 16, stream: false }),
  },
  {
    path: '/agent-a/v1/responses', shape: 'openai', models: ['fuzz-openai', 'fuzz-anthropic'],
    valid: (model) => ({ model, instructions: 'be brief', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], tools: [{ type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } }], stream: true }),
  },
];

async function send(path: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; contentType: string | null; text: string }> {
  const res = await fetch(relay.inferenceUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${viaOpenAI.relayKey}`, 'content-type': 'application/json', ...headers },
    body: bytes,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

let badInputs = 0;
const statuses = new Map<number, number>();

for (const route of ROUTES) {
  t.test(`${route.path}: hostile bodies`, async (t) => {
    const findings: Finding[] = [];
    for (const model of route.models) {
      const valid = route.valid(model);
      const ok = await send(route.path, Buffer.from(JSON.stringify(valid)));
      t.ok(ok.status >= 200 && ok.status < 300, `${model}: the valid request is served (${ok.status} ${ok.text.slice(0, 200)})`);
      const bodies = fc.sample(hostileBody(valid), { seed: SEED, numRuns: CASES_PER_ROUTE_AND_MODEL });
      for (const body of bodies) {
        badInputs++;
        let problem: string | null;
        try {
          const got = await send(route.path, body.bytes);
          statuses.set(got.status, (statuses.get(got.status) ?? 0) + 1);
          problem = judgeAnswer(route.shape, got.status, got.contentType, got.text);
        } catch (err) {
          problem = `no answer: ${(err as Error).name} ${(err as Error).message}`;
        }
        if (problem) findings.push({ what: `${model}: ${body.what}`, problem });
      }
    }
    for (const f of findings) t.fail(`${f.what}: ${f.problem}`);
    if (findings.length === 0) t.pass(`${route.models.length * CASES_PER_ROUTE_AND_MODEL} hostile bodies: every answer a 2xx or a 4xx in the ${route.shape} shape`);
  });
}

t.test('wrong content types, oversized and invalid-UTF-8 bodies, huge headers', async (t) => {
  const valid = Buffer.from(JSON.stringify({ model: 'fuzz-openai', messages: text }));
  const cases: Array<{ what: string; headers?: Record<string, string>; bytes: Buffer; status: number[] }> = [
    { what: 'text/plain', headers: { 'content-type': 'text/plain' }, bytes: valid, status: [415] },
    { what: 'multipart/form-data', headers: { 'content-type': 'multipart/form-data; boundary=x' }, bytes: Buffer.from('--x\r\nContent-Disposition: form-data; name="model"\r\n\r\nfuzz-openai\r\n--x--\r\n'), status: [415] },
    { what: 'application/x-www-form-urlencoded', headers: { 'content-type': 'application/x-www-form-urlencoded' }, bytes: Buffer.from('model=fuzz-openai'), status: [415] },
    { what: 'no content-type', headers: { 'content-type': '' }, bytes: valid, status: [415] },
    { what: 'application/json with a charset other than UTF-8', headers: { 'content-type': 'application/json; charset=utf-16' }, bytes: valid, status: [200, 400, 415] },
    { what: 'invalid UTF-8 in the whole body', bytes: Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), status: [400] },
    { what: 'a 40 MB body (over the 32 MiB limit)', bytes: Buffer.alloc(40 * 1024 * 1024, 0x20), status: [413] },
  ];
  for (const c of cases) {
    badInputs++;
    const got = await send('/vendor-a/v1/chat/completions', c.bytes, c.headers).catch((err: Error) => ({ status: 0, contentType: null, text: err.message }));
    t.ok(c.status.includes(got.status), `${c.what}: ${got.status} (expected ${c.status.join(' or ')})`);
    if (got.status >= 400) t.equal(judgeAnswer('openai', got.status, got.contentType, got.text), null, `${c.what}: a JSON error in the OpenAI shape`);
  }
  badInputs++;
  const badUrl = await send('/vendor-a/v1/chat/%E0%A4%A', valid);
  t.equal(badUrl.status, 400, 'a bad percent-encoding in the path: 400');
  t.equal(judgeAnswer('canonical', badUrl.status, badUrl.contentType, badUrl.text), null, 'a bad percent-encoding: a JSON error');
  badInputs++;
  const huge = await send('/vendor-a/v1/chat/completions', valid, { 'x-filler': 'a'.repeat(64 * 1024) }).catch((err: Error) => ({ status: 0, contentType: null, text: err.message }));
  t.equal(huge.status, 431, '64 KiB of headers: 431');
  t.match(JSON.parse(huge.text), { error: { code: 'RELAY_ERR_HEADERS_TOO_LARGE' } }, "in Relay's error body");
});

t.test('Relay is healthy afterwards and logged no internal error', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
  t.equal(res.status, 200, '/healthz 200');
  const internal = logs.filter((l) => /RELAY_ERR_INTERNAL|"level":(50|60)/.test(l));
  t.same(internal.map((l) => l.slice(0, 400)), [], 'no error-level log line');
  recordCounters('fuzz-inference', { badInputs, ...Object.fromEntries([...statuses].map(([s, n]) => [`status${s}`, n])) });
});
