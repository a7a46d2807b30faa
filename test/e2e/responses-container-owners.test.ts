// Code containers a passed-through Responses answer ran in (code_interpreter, the hosted shell):
// OpenAI keeps them per project, so one made for relay key A is reachable by every key behind the
// same host key. Relay records the container as A's and refuses another key's request naming it
// (a code_interpreter container id, a shell container_reference, a code_interpreter_call of the
// history, whose container auto mode reuses) with a 404, before anything reaches the upstream.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS, type TestRelay } from '../../core/testing.ts';
import { openai, parseSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay, type Answer } from '../support/relay-client.ts';
import { keyOfSamePolicy, ownerOf } from '../support/owned-ids.ts';

type Json = Record<string, any>;

/** Answers a request declaring code_interpreter or shell as OpenAI does: in the container it names, or a new one. */
function runsContainers(up: FakeUpstream): void {
  up.script((req) => {
    const tools: Json[] = Array.isArray(req.json?.tools) ? req.json.tools : [];
    const tool = tools.find((x) => x?.type === 'code_interpreter' || x?.type === 'shell');
    if (req.pathname !== '/v1/responses' || !tool) return undefined;
    const shell = tool.type === 'shell';
    const named = shell ? (tool.environment?.type === 'container_reference' ? tool.environment.container_id : undefined) : (typeof tool.container === 'string' ? tool.container : undefined);
    const containerId: string = named ?? `cntr_${randomBytes(24).toString('hex')}`;
    const o = { model: String(req.json.model), text: `ran in ${containerId}`, containerId, shell };
    return req.json.stream === true ? { frames: openai.containerEvents(o) } : { body: openai.containerResponse(o) };
  });
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<{ relay: TestRelay; up: FakeUpstream; a: string; b: string; model: string }> {
  const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
  const up = await startFakeUpstream();
  t.teardown(async () => {
    await relay.close();
    await up.close();
  });
  runsContainers(up);
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'coder', policy: { modelIds: '*' } });
  const b = await keyOfSamePolicy(relay, seeded);
  return { relay, up, a: seeded.relayKey, b, model: 'coder' };
}

const send = (relay: TestRelay, key: string, body: unknown, path = '/vendor-a/v1/responses'): Promise<Answer> => viaRelay(relay, path, key, body);

/** The container the answer's call ran in, from the JSON or the stream's frames. */
function containerOf(answer: Answer): string {
  if (!answer.text.startsWith('event:')) {
    const call = (JSON.parse(answer.text) as Json).output[0];
    return call.container_id ?? call.environment.container_id;
  }
  const done = parseSse(answer.text).map((f) => JSON.parse(f.data) as Json).find((e) => e.type === 'response.output_item.done')!;
  return done.item.container_id ?? done.item.environment.container_id;
}

const FUNCTION_TOOL = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };

t.test('a container made for key A is A\'s: another key cannot name it, A can', async (t) => {
  const { relay, up, a, b, model } = await setup(t);

  for (const stream of [false, true]) {
    t.test(stream ? 'made by a streamed answer' : 'made by a JSON answer', async (t) => {
      const made = await send(relay, a, { model, input: 'Compute 6 * 7 in Python.', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], ...(stream ? { stream: true } : {}) });
      t.equal(made.status, 200);
      const container = containerOf(made);
      t.match(container, /^cntr_/);
      t.match(await ownerOf(relay, container), /^key:/, 'the container is recorded as A\'s');

      const before = up.requests.length;
      const named = await send(relay, b, { model, input: 'What is in /mnt/data?', tools: [{ type: 'code_interpreter', container }] });
      t.equal(named.status, 404);
      t.match(JSON.parse(named.text), { error: { code: 'RELAY_ERR_NOT_FOUND', type: 'not_found_error', param: '/tools/0/container', message: `Container with id '${container}' not found.` } });
      const shell = await send(relay, b, { model, input: 'ls /mnt/data', tools: [FUNCTION_TOOL, { type: 'shell', environment: { type: 'container_reference', container_id: container } }] });
      t.equal(shell.status, 404, 'the shell tool\'s container_reference');
      t.equal(JSON.parse(shell.text).error.param, '/tools/1/environment/container_id');
      const history = await send(relay, b, {
        model,
        input: [{ type: 'code_interpreter_call', id: 'ci_copied', status: 'completed', code: 'print(1)', container_id: container, outputs: null }, { role: 'user', content: 'Run it again.' }],
        tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      });
      t.equal(history.status, 404, 'a code_interpreter_call of the history (auto mode reuses its container)');
      t.equal(JSON.parse(history.text).error.param, '/input/0/container_id');
      const noTool = await send(relay, b, { model, input: [{ type: 'code_interpreter_call', id: 'ci_copied', status: 'completed', code: 'print(1)', container_id: container, outputs: null }, { role: 'user', content: 'What ran?' }] });
      t.equal(noTool.status, 200, 'the same history without a tool that runs code: nothing can run in it, forwarded');
      t.equal(up.requests.length, before + 1);
      const escaped = await send(relay, b, `{"model":"${model}","input":"ls","tools":[{"type":"code_interpreter","\\u0063ontainer":"${container}"}]}`);
      t.equal(escaped.status, 404, 'a member name spelled with an escape is the same member to OpenAI');
      const streamed = await send(relay, b, { model, input: 'ls', stream: true, tools: [{ type: 'code_interpreter', container }] });
      t.equal(streamed.status, 404, 'a streamed request is refused the same way');
      const codex = await send(relay, b, { model, input: 'ls', stream: true, store: false, tools: [{ type: 'code_interpreter', container }] }, '/agent-a/v1/responses');
      t.equal(codex.status, 404, 'and on the Codex route');
      t.equal(up.requests.length, before + 1, 'nothing else reached the upstream');

      const own = await send(relay, a, { model, input: 'Now print it squared.', tools: [{ type: 'code_interpreter', container }] });
      t.equal(own.status, 200, 'A goes on in its container');
      t.equal(up.lastRequest()!.json.tools[0].container, container, 'forwarded as sent');
    });
  }

  t.test('store: false keeps no response, but the container it made is recorded', async (t) => {
    const made = await send(relay, a, { model, input: 'Plot it.', store: false, stream: true, tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
    t.equal(made.status, 200);
    const container = containerOf(made);
    t.match(await ownerOf(relay, container), /^key:/);
    const responseId = parseSse(made.text).map((f) => JSON.parse(f.data) as Json).find((e) => e.type === 'response.created')!.response.id;
    t.equal((await relay.relay.db.query('SELECT 1 FROM responses_forwarded_owners WHERE id = $1', [responseId])).rows.length, 0, 'the response id is not (OpenAI kept none)');
    const before = up.requests.length;
    const named = await send(relay, b, { model, input: 'ls', store: false, tools: [{ type: 'code_interpreter', container }] });
    t.equal(named.status, 404);
    t.equal(up.requests.length, before);
  });

  t.test('the hosted shell\'s container is recorded from its shell_call', async (t) => {
    const made = await send(relay, a, { model, input: 'Run python.', tools: [{ type: 'shell', environment: { type: 'container_auto' } }] });
    t.equal(made.status, 200);
    const container = containerOf(made);
    t.match(await ownerOf(relay, container), /^key:/);
    const named = await send(relay, b, { model, input: 'cat out.txt', tools: [{ type: 'shell', environment: { type: 'container_reference', container_id: container } }] });
    t.equal(named.status, 404);
    t.equal(JSON.parse(named.text).error.param, '/tools/0/environment/container_id');
  });

  t.test('a container Relay never recorded is forwarded', async (t) => {
    const other = await send(relay, b, { model, input: 'ls', tools: [{ type: 'code_interpreter', container: 'cntr_made_with_the_containers_api' }] });
    t.equal(other.status, 200);
    t.equal(up.lastRequest()!.json.tools[0].container, 'cntr_made_with_the_containers_api');
  });

  t.test('tools twice is refused (a parser keeping the first would run another container)', async (t) => {
    const twice = await send(relay, b, `{"model":"${model}","input":"ls","tools":[],"tools":[{"type":"code_interpreter","container":"cntr_x"}]}`);
    t.equal(twice.status, 400);
    t.match(JSON.parse(twice.text).error.message, /'tools' appears more than once/);
  });

  t.test('a key written twice in a tool or an item is refused (a parser keeping the first would run A\'s container)', async (t) => {
    const made = await send(relay, a, { model, input: 'Compute 2 ** 10.', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
    const container = containerOf(made);
    t.match(await ownerOf(relay, container), /^key:/);
    const auto = '{"type":"code_interpreter","container":{"type":"auto"}}';
    const before = up.requests.length;
    for (const [body, param, why] of [
      [`{"model":"${model}","input":"ls","tools":[{"type":"code_interpreter","container":"${container}","container":{"type":"auto"}}]}`, '/tools/0/container', 'a tool\'s container, the last auto'],
      [`{"model":"${model}","input":"ls","tools":[{"type":"shell","environment":{"type":"container_reference","container_id":"${container}"},"environment":{"type":"container_auto"}}]}`, '/tools/0/environment', 'a shell tool\'s environment'],
      [`{"model":"${model}","input":[{"type":"code_interpreter_call","id":"ci_copied","status":"completed","code":"print(1)","container_id":"${container}","container_id":"cntr_B_s_own","outputs":null}],"tools":[${auto}]}`, '/input/0/container_id', 'a code_interpreter_call\'s container_id'],
    ] as const) {
      const refused = await send(relay, b, body);
      t.equal(refused.status, 400, why);
      t.match(JSON.parse(refused.text), { error: { code: 'RELAY_ERR_BAD_REQUEST', param } }, why);
    }
    t.equal(up.requests.length, before, 'nothing reached the upstream');
  });

  t.test('the database does not answer: a request naming a container is a 503, one naming none goes on without a query', async (t) => {
    await relay.relay.db.query('ALTER TABLE responses_forwarded_owners RENAME TO owners_away');
    t.teardown(async () => { await relay.relay.db.query('ALTER TABLE owners_away RENAME TO responses_forwarded_owners'); });
    const before = up.requests.length;
    const named = await send(relay, b, { model, input: 'ls', tools: [{ type: 'code_interpreter', container: 'cntr_any' }] });
    t.equal(named.status, 503);
    t.equal(JSON.parse(named.text).error.code, 'RELAY_ERR_DATABASE_UNAVAILABLE');
    t.equal(up.requests.length, before, 'not forwarded unchecked');
    const plain = await send(relay, b, { model, input: 'Hello.', store: false, tools: [FUNCTION_TOOL, { type: 'code_interpreter', container: { type: 'auto' } }] });
    t.equal(plain.status, 200, 'an auto container names none: no query was needed');
  });
});
