// Responses `store` must be a boolean (or null): a string such as "yes" was read as true (the
// answer kept) on translated routes and forwarded as sent on passthrough. It is a 400 naming
// /store, in the shape schema errors already have, on /vendor-a and Codex's /agent-a, translated
// or passed through, before anything is forwarded.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const openaiUp = await startFakeUpstream({ text: 'OpenAI says hello.' });
const claudeUp = await startFakeUpstream({ text: 'Claude says hello.' });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await claudeUp.close();
});
const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'store-gpt' });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'store-claude' });
await settled(relay, (s) => [gpt, claude].every((r) => s.relayKeys.has(r.relayKeyId)));

type OpenAIError = { message: string; param?: string; code?: string };
const errorOf = (text: string): OpenAIError => (JSON.parse(text) as { error: OpenAIError }).error;

const routes = [
  { kind: 'passthrough', route: gpt, model: 'store-gpt', upstream: openaiUp },
  { kind: 'translated', route: claude, model: 'store-claude', upstream: claudeUp },
] as const;

for (const path of ['/vendor-a/v1/responses', '/agent-a/v1/responses']) {
  for (const { kind, route, model, upstream } of routes) {
    t.test(`${kind} ${path}: a non-boolean store is a 400 naming /store, and the upstream is never asked`, async (t) => {
      for (const store of ['yes', 1, {}, 'false']) {
        for (const stream of [false, true]) {
          const before = upstream.requests.length;
          const res = await viaRelay(relay, path, route.relayKey, { model, input: 'Hello.', store, stream });
          if (!t.equal(res.status, 400, `store ${JSON.stringify(store)}, stream ${stream}`)) continue;
          t.equal(errorOf(res.text).code, 'RELAY_ERR_BAD_REQUEST');
          t.equal(errorOf(res.text).param, '/store');
          t.match(errorOf(res.text).message, /^\/store: /, 'the schema errors\' wording');
          t.equal(upstream.requests.length, before, 'not forwarded');
        }
      }
    });

    t.test(`${kind} ${path}: store true, false, null or absent is served`, async (t) => {
      for (const extra of [{}, { store: true }, { store: false }, { store: null }]) {
        const res = await viaRelay(relay, path, route.relayKey, { model, input: 'Hello.', ...extra });
        t.equal(res.status, 200, JSON.stringify(extra));
      }
    });
  }
}
