// Code execution containers a passed-through Messages answer ran in: Anthropic keeps them under the
// key that made them, so one made for relay key A is reachable, through `container`, by every key
// behind the same host key. Relay records the container as A's and refuses another key's request
// naming it with a 404 in Anthropic's error shape, before anything reaches the upstream.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startRelay, seedRoute, type TestRelay } from '../../core/testing.ts';
import { anthropic, parseSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay, type Answer } from '../support/relay-client.ts';
import { keyOfOtherPolicy, keyOfSamePolicy, ownerOf } from '../support/owned-ids.ts';

type Json = Record<string, any>;

const CODE_EXECUTION = { type: 'code_execution_20250825', name: 'code_execution' };

/** Answers a request with a code execution tool or a container as Anthropic does: in the container it names, or a new one. */
function runsCode(up: FakeUpstream): void {
  up.script((req) => {
    const tools: Json[] = Array.isArray(req.json?.tools) ? req.json.tools : [];
    const container = req.json?.container;
    if (req.pathname !== '/v1/messages' || (!tools.some((x) => String(x?.type).startsWith('code_execution_')) && container === undefined)) return undefined;
    const named = typeof container === 'string' ? container : container?.id;
    const containerId: string = named ?? `container_011${randomBytes(16).toString('base64url')}`;
    const o = { model: String(req.json.model), text: `ran in ${containerId}`, containerId };
    return req.json.stream === true ? { frames: anthropic.codeExecutionEvents(o) } : { body: anthropic.codeExecutionMessage(o) };
  });
}

async function setup(t: { teardown(fn: () => Promise<void>): void }, config?: Record<string, unknown>): Promise<{ relay: TestRelay; up: FakeUpstream; a: string; b: string; model: string }> {
  const relay = await startRelay(config ? { config } : {});
  const up = await startFakeUpstream();
  t.teardown(async () => {
    await relay.close();
    await up.close();
  });
  runsCode(up);
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-coder', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
  const b = await keyOfSamePolicy(relay, seeded);
  return { relay, up, a: seeded.relayKey, b, model: 'claude-coder' };
}

const send = (relay: TestRelay, key: string, body: unknown): Promise<Answer> => viaRelay(relay, '/vendor-b/v1/messages', key, body, { 'anthropic-version': '2023-06-01' });
const ask = (model: string, extra: Json = {}) => ({ model, max_tokens: 256, messages: [{ role: 'user', content: 'What is in /tmp?' }], ...extra });

/** The container the answer names: the JSON's `container`, or the stream's message_delta. */
function containerOf(answer: Answer): string {
  if (!answer.text.startsWith('event:')) return (JSON.parse(answer.text) as Json).container.id;
  return parseSse(answer.text).map((f) => JSON.parse(f.data) as Json).find((e) => e.type === 'message_delta')!.delta.container.id;
}

t.test('a container made for key A is A\'s: another key cannot name it, A can', async (t) => {
  const { relay, up, a, b, model } = await setup(t);

  for (const stream of [false, true]) {
    t.test(stream ? 'made by a streamed answer' : 'made by a JSON answer', async (t) => {
      const made = await send(relay, a, ask(model, { tools: [CODE_EXECUTION], ...(stream ? { stream: true } : {}) }));
      t.equal(made.status, 200);
      const container = containerOf(made);
      t.match(container, /^container_011/);
      t.match(await ownerOf(relay, container), /^key:/, 'the container is recorded as A\'s');

      const before = up.requests.length;
      const named = await send(relay, b, ask(model, { container, tools: [CODE_EXECUTION] }));
      t.equal(named.status, 404);
      t.same(JSON.parse(named.text), { type: 'error', error: { type: 'not_found_error', message: `Container with id '${container}' not found.` } });
      const withSkills = await send(relay, b, ask(model, { container: { id: container, skills: [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] }, tools: [CODE_EXECUTION] }));
      t.equal(withSkills.status, 404, 'the {id, skills} form');
      const escaped = await send(relay, b, `{"model":"${model}","max_tokens":64,"messages":[{"role":"user","content":"ls"}],"\\u0063ontainer":"${container}"}`);
      t.equal(escaped.status, 404, 'a member name spelled with an escape is the same member');
      const streamed = await send(relay, b, ask(model, { container, stream: true }));
      t.equal(streamed.status, 404, 'a streamed request is refused the same way');
      t.equal(up.requests.length, before, 'nothing reached the upstream');

      const own = await send(relay, a, ask(model, { container, tools: [CODE_EXECUTION] }));
      t.equal(own.status, 200, 'A goes on in its container');
      t.equal(up.lastRequest()!.json.container, container, 'forwarded as sent');
    });
  }

  t.test('a container Relay never recorded is forwarded; a request without one costs no query', async (t) => {
    const other = await send(relay, b, ask(model, { container: 'container_011made_outside_relay' }));
    t.equal(other.status, 200);
    t.equal(up.lastRequest()!.json.container, 'container_011made_outside_relay');

    await relay.relay.db.query('ALTER TABLE responses_forwarded_owners RENAME TO owners_away');
    t.teardown(async () => { await relay.relay.db.query('ALTER TABLE owners_away RENAME TO responses_forwarded_owners'); });
    const before = up.requests.length;
    const down = await send(relay, b, ask(model, { container: 'container_011any' }));
    t.equal(down.status, 503, 'the database does not answer: refused, not forwarded unchecked');
    t.same(JSON.parse(down.text), { type: 'error', error: { type: 'overloaded_error', message: 'What the request names (a response, item, container or file) cannot be checked against its owner: the database did not answer.' } });
    t.equal(up.requests.length, before);
    const plain = await send(relay, b, ask(model));
    t.equal(plain.status, 200, 'no container named: no query, served while the table is gone');
  });

  t.test('container twice is refused (a parser keeping the first would run another)', async (t) => {
    const twice = await send(relay, b, `{"model":"${model}","max_tokens":64,"messages":[{"role":"user","content":"ls"}],"container":"container_011x","container":"container_011y"}`);
    t.equal(twice.status, 400);
    t.match(JSON.parse(twice.text).error.message, /'container' appears more than once/);
  });
});

t.test('policy scope: keys of one policy share a container, another policy\'s key does not', async (t) => {
  const { relay, up, a, b, model } = await setup(t, { responsesState: { scope: 'policy' } });
  const made = await send(relay, a, ask(model, { tools: [CODE_EXECUTION] }));
  const container = containerOf(made);
  t.match(await ownerOf(relay, container), /^policy:/);
  t.equal((await send(relay, b, ask(model, { container }))).status, 200, 'a key of the same policy uses it');

  const outsider = await keyOfOtherPolicy(relay);
  const before = up.requests.length;
  t.equal((await send(relay, outsider, ask(model, { container }))).status, 404);
  t.equal(up.requests.length, before);
});

t.test('responsesState.enabled: false records and checks nothing', async (t) => {
  const { relay, a, b, model } = await setup(t, { responsesState: { enabled: false } });
  const made = await send(relay, a, ask(model, { tools: [CODE_EXECUTION] }));
  const container = containerOf(made);
  t.equal((await send(relay, b, ask(model, { container }))).status, 200, 'forwarded, as before the record');
  t.equal((await relay.relay.db.query('SELECT 1 FROM responses_forwarded_owners WHERE id = $1', [container])).rows.length, 0);
});
