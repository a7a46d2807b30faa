// An upstream that quotes Relay's host key in a Responses answer (its output text; a forwarded
// answer's ids too): the caller's copy is masked as it goes out, and so is what Relay stores of
// the answer, which is served again by GET /v1/responses/{id} and expanded into the next turn by
// previous_response_id. Translated (an Anthropic upstream) and forwarded (an OpenAI model that
// falls back to Claude, so Relay keeps a copy), whole and streamed.
import t from 'tap';
import { eventually, startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, parseSse, startFakeUpstream, type RecordedRequest } from '../support/fake-upstream.ts';
import { settled, viaRelay, type Answer } from '../support/relay-client.ts';

type Json = Record<string, any>;
const CLAUDE_KEY = 'sk-ant-stored/answer+key-0123456789abcdef';
const GPT_KEY = 'sk-proj-stored/answer+key-fedcba9876543210';
const SSE = { 'content-type': 'text/event-stream; charset=utf-8' };
const MASK = /\[redacted host key\]\**/;

const relay = await startRelay();
const claudeUp = await startFakeUpstream();
const gptUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
  await gptUp.close();
});

const said = (key: string): string => `I was signed with ${key} and say so.`;
// One text delta: a key split across deltas is not one run of bytes the caller's scrubber can see.
claudeUp.script((req: RecordedRequest) => {
  const j = req.json as Json;
  const body = { model: j.model, chunks: 1, text: said(String(req.headers['x-api-key'])) };
  return j.stream ? { headers: SSE, frames: anthropic.events(body) } : { body: anthropic.message(body) };
});
/** Whether the OpenAI upstream's next answer carries the key in its response id as well. */
let keyInId = false;
gptUp.script((req: RecordedRequest) => {
  const j = req.json as Json;
  const key = String(req.headers.authorization).replace(/^Bearer /, '');
  const body = { model: j.model, chunks: 1, text: said(key) };
  if (j.stream) return { headers: SSE, frames: openai.responseEvents(body) };
  return { body: keyInId ? { ...openai.response(body), id: `resp_${key}` } : openai.response(body) };
});

const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'quoting-claude', hostKeys: [CLAUDE_KEY], policy: { modelIds: '*' } });
// Falls back to Claude: its passthrough keeps a copy (responsesState.keepForwarded).
const gpt = await seedRoute(relay, {
  baseUrl: `${gptUp.url}/v1`, adapter: 'openai', model: 'quoting-gpt', hostKeys: [GPT_KEY], policy: { modelIds: '*' }, model_spec: { fallbacks: [{ modelId: claude.modelId }] },
});
await settled(relay, (s) => [claude, gpt].every((r) => s.relayKeys.has(r.relayKeyId)) && s.modelBySlug('quoting-gpt')?.spec.fallbacks?.length === 1);

/** The key in the bytes, in its "\/" spelling, or in what a JSON reader decodes of them. */
function holdsKey(text: string): boolean {
  for (const key of [CLAUDE_KEY, GPT_KEY]) {
    if (text.includes(key) || text.replaceAll('\\/', '/').includes(key)) return true;
  }
  return false;
}

/** The response object of an answer: the body, or a stream's response.completed frame. */
function responseOf(answer: Answer): Json {
  if (!answer.text.startsWith('event:')) return JSON.parse(answer.text) as Json;
  return (JSON.parse(parseSse(answer.text).find((f) => f.event === 'response.completed')!.data) as Json).response;
}

const textOf = (response: Json): string => response.output[0].content[0].text;

async function get(path: string, relayKey: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1${path}`, { headers: { authorization: `Bearer ${relayKey}` } });
  return { status: res.status, text: await res.text() };
}

for (const stream of [false, true]) {
  const how = stream ? 'streamed' : 'whole';
  t.test(`translated, ${how}: the stored response and the next turn hold the mask the caller got, not the key`, async (t) => {
    const answer = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, { model: 'quoting-claude', input: 'Which key?', stream });
    t.equal(answer.status, 200);
    t.notOk(holdsKey(answer.text), 'the caller\'s copy: no key');
    const got = responseOf(answer);
    t.match(textOf(got), MASK, 'the caller\'s copy: masked where the key was');

    const stored = await get(`/responses/${got.id}`, claude.relayKey);
    t.equal(stored.status, 200);
    t.notOk(holdsKey(stored.text) || holdsKey(JSON.stringify(JSON.parse(stored.text))), 'GET: no key');
    t.equal(textOf(JSON.parse(stored.text) as Json), textOf(got), 'GET: the text the caller got, with the same mask');

    const next = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, { model: 'quoting-claude', previous_response_id: got.id, input: 'And again?' });
    t.equal(next.status, 200);
    const sent = claudeUp.lastRequest()!.body.toString('utf8');
    t.notOk(holdsKey(sent), 'the next turn\'s history, as sent upstream: no key');
    t.ok(sent.includes(textOf(got)), 'it carries the masked answer');
  });

  t.test(`forwarded, ${how}: the copy Relay keeps holds no key`, async (t) => {
    const answer = await viaRelay(relay, '/vendor-a/v1/responses', gpt.relayKey, { model: 'quoting-gpt', input: 'Which key?', stream });
    t.equal(answer.status, 200);
    t.equal(gptUp.lastRequest()!.pathname, '/v1/responses', 'passed through to OpenAI');
    t.notOk(holdsKey(answer.text), 'the caller\'s copy: no key');
    const got = responseOf(answer);
    t.match(textOf(got), MASK, 'the caller\'s copy: masked');

    const stored = await get(`/responses/${got.id}`, gpt.relayKey);
    t.equal(stored.status, 200, 'Relay kept a copy');
    t.notOk(holdsKey(stored.text) || holdsKey(JSON.stringify(JSON.parse(stored.text))), 'GET: no key');
    t.equal(textOf(JSON.parse(stored.text) as Json), textOf(got), 'GET: the text the caller got, with the same mask');
  });
}

t.test('forwarded: an answer whose id quotes the key is kept under the id the caller got, and no table holds the key', async (t) => {
  keyInId = true;
  t.teardown(() => { keyInId = false; });
  const answer = await viaRelay(relay, '/vendor-a/v1/responses', gpt.relayKey, { model: 'quoting-gpt', input: 'Which key?' });
  t.equal(answer.status, 200);
  t.notOk(holdsKey(answer.text), 'the caller\'s copy: no key');
  const id = (JSON.parse(answer.text) as Json).id as string;
  t.match(id, /^resp_\[redacted host key\]\**$/, 'the caller got the id masked');

  const stored = await get(`/responses/${encodeURIComponent(id)}`, gpt.relayKey);
  t.equal(stored.status, 200, 'GET by the id the caller got');
  t.notOk(holdsKey(stored.text), 'GET: no key');

  const rows = async (sql: string, ...more: string[]) => (await relay.relay.db.query<{ n: number }>(sql, [GPT_KEY, ...more])).rows[0]!.n;
  // The ledger is written after the answer, in the background: its row for the answer, however spelled, first.
  await eventually(async () => await rows('SELECT count(*)::int AS n FROM responses_forwarded_owners WHERE id = $2 OR strpos(id, $1) > 0', id) > 0);
  t.equal(await rows('SELECT count(*)::int AS n FROM responses_forwarded_owners WHERE strpos(id, $1) > 0'), 0, 'not in the ownership ledger');
  t.equal(await rows('SELECT count(*)::int AS n FROM responses_state WHERE strpos(id, $1) > 0'), 0, 'not in a stored response\'s id');
  t.equal(await rows('SELECT count(*)::int AS n FROM responses_state_items WHERE strpos(item_id, $1) > 0'), 0, 'not in a stored item\'s id');
});
