// Responses `background: true`: OpenAI answers at once (status "queued", no usage) and generates
// afterwards on the operator's host key. Passed through, Relay recorded 0 tokens and never saw the
// generation finish, so budgets and token rate limits did not count it. It is refused on
// passthrough (/vendor-a and Codex's /agent-a), a 400 naming the member and saying why, before the
// upstream is asked; read like service_tier (a duplicated key is a 400). A translated route answers
// synchronously and keeps dropping it, named in x-relay-dropped.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { post, settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const openaiUp = await startFakeUpstream({ text: 'OpenAI says hello.' });
const claudeUp = await startFakeUpstream({ text: 'Claude says hello.' });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await claudeUp.close();
});
const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'bg-gpt' });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'bg-claude' });
await settled(relay, (s) => [gpt, claude].every((r) => s.relayKeys.has(r.relayKeyId)));

type OpenAIError = { message: string; param?: string; code?: string };
const errorOf = (text: string): OpenAIError => (JSON.parse(text) as { error: OpenAIError }).error;

for (const path of ['/vendor-a/v1/responses', '/agent-a/v1/responses']) {
  t.test(`passthrough ${path}: background: true is a 400 naming it, and the upstream is never asked`, async (t) => {
    for (const stream of [false, true]) {
      const before = openaiUp.requests.length;
      const res = await viaRelay(relay, path, gpt.relayKey, { model: 'bg-gpt', input: 'Write a long essay.', background: true, stream });
      t.equal(res.status, 400, `stream ${stream}`);
      t.equal(errorOf(res.text).code, 'RELAY_ERR_BAD_REQUEST');
      t.equal(errorOf(res.text).param, '/background');
      t.match(errorOf(res.text).message, /cannot meter/, 'says why');
      t.equal(openaiUp.requests.length, before, 'not forwarded');
    }
  });
}

t.test('passthrough: background false or absent is forwarded as sent', async (t) => {
  for (const extra of [{}, { background: false }]) {
    const res = await viaRelay(relay, '/vendor-a/v1/responses', gpt.relayKey, { model: 'bg-gpt', input: 'Hello.', ...extra });
    t.equal(res.status, 200);
    t.same((openaiUp.lastRequest()!.json as { background?: unknown }).background, (extra as { background?: unknown }).background);
  }
});

t.test('passthrough: a duplicated background key is a 400, never read one way and served another', async (t) => {
  const before = openaiUp.requests.length;
  const res = await post(`${relay.inferenceUrl}/vendor-a/v1/responses`, { authorization: `Bearer ${gpt.relayKey}` },
    '{"model":"bg-gpt","input":"Hello.","background":false,"background":true}');
  t.equal(res.status, 400);
  t.equal(errorOf(res.text).param, '/background');
  t.equal(openaiUp.requests.length, before);
});

t.test('translated: background is dropped and named, and the answer is complete', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, { model: 'bg-claude', input: 'Hello.', background: true });
  t.equal(res.status, 200);
  t.match(res.headers.get('x-relay-dropped') ?? '', /\bbackground\b/);
  const body = JSON.parse(res.text) as { status: string; usage: { output_tokens: number } };
  t.equal(body.status, 'completed');
  t.ok(body.usage.output_tokens > 0, 'metered');
  t.notOk('background' in (claudeUp.lastRequest()!.json as object), 'not sent to Anthropic');
});
