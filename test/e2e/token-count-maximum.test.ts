// A token count no vendor reads (max_tokens: 1e308) passed the translated request schemas, whose
// integers had a minimum only, and reached the upstream as 1e+308. Every translated shape now caps
// its token counts at 2^31-1 (MAX_TOKEN_COUNT): a larger one is a 400 naming the field, and the
// upstream is never asked. Passthrough still forwards as sent (the upstream judges its own shape).
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { MAX_TOKEN_COUNT } from '../../core/canonical/types.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const claudeUp = await startFakeUpstream();
const chatUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
  await chatUp.close();
});
// Each shape is sent to a model of another vendor, so it is translated.
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'cap-claude', policy: { modelIds: '*' } });
const gpt = await seedRoute(relay, { baseUrl: `${chatUp.url}/v1`, adapter: 'openai', model: 'cap-gpt', shapes: ['openai.chat'], policy: { modelIds: '*' } });
await settled(relay, (s) => [claude, gpt].every((r) => s.relayKeys.has(r.relayKeyId)));

const TEXT = [{ type: 'text', text: 'hi' }];
type Case = { path: string; model: string; field: string; body: (n: number) => Record<string, unknown> };
const cases: Case[] = [
  { path: '/vendor-b/v1/messages', model: 'cap-gpt', field: '/max_tokens', body: (n) => ({ max_tokens: n, messages: [{ role: 'user', content: 'hi' }] }) },
  {
    path: '/vendor-b/v1/messages', model: 'cap-gpt', field: '/thinking/budget_tokens',
    body: (n) => ({ max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: n }, messages: [{ role: 'user', content: 'hi' }] }),
  },
  { path: '/vendor-a/v1/chat/completions', model: 'cap-claude', field: '/max_tokens', body: (n) => ({ max_tokens: n, messages: [{ role: 'user', content: 'hi' }] }) },
  { path: '/vendor-a/v1/chat/completions', model: 'cap-claude', field: '/max_completion_tokens', body: (n) => ({ max_completion_tokens: n, messages: [{ role: 'user', content: 'hi' }] }) },
  { path: '/vendor-a/v1/responses', model: 'cap-claude', field: '/max_output_tokens', body: (n) => ({ max_output_tokens: n, input: 'hi', store: false }) },
  { path: '/v1/generate', model: 'cap-claude', field: '/max_output_tokens', body: (n) => ({ max_output_tokens: n, messages: [{ role: 'user', content: TEXT }] }) },
  { path: '/v1/generate', model: 'cap-claude', field: '/reasoning/budget_tokens', body: (n) => ({ reasoning: { budget_tokens: n }, messages: [{ role: 'user', content: TEXT }] }) },
];

const requests = () => claudeUp.requests.length + chatUp.requests.length;
for (const c of cases) {
  t.test(`${c.path} ${c.field}`, async (t) => {
    for (const n of [1e308, MAX_TOKEN_COUNT + 1]) {
      const before = requests();
      const res = await viaRelay(relay, c.path, c.model === 'cap-gpt' ? gpt.relayKey : claude.relayKey, { model: c.model, ...c.body(n) });
      t.equal(res.status, 400, `${n}: ${res.text.slice(0, 200)}`);
      t.match(res.text, c.field, 'names the field');
      t.match(res.text, String(MAX_TOKEN_COUNT), 'and the largest it takes');
      t.equal(requests(), before, 'the upstream was never asked');
    }
    const largest = await viaRelay(relay, c.path, c.model === 'cap-gpt' ? gpt.relayKey : claude.relayKey, { model: c.model, ...c.body(MAX_TOKEN_COUNT) });
    t.equal(largest.status, 200, `${MAX_TOKEN_COUNT} is still taken`);
  });
}
