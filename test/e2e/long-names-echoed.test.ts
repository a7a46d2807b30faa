// Error messages that echo a name the caller sent (a model, a model id in a URL, an item id) cut
// it to its first 200 characters and say how long it was: a request whose `model` is a 1 MB
// string got a 404 whose message (and so its body, and any log of it) held the whole string.
// Short names are echoed exactly as before.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const claudeUp = await startFakeUpstream({ text: 'Claude says hello.' });
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
});
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'echo-claude' });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId));

const messageOf = (text: string): string => {
  const body = JSON.parse(text) as { error: { message: string } };
  return body.error.message;
};
const HEAD = 'm'.repeat(200);
const LONG = `${HEAD}${'x'.repeat(1024 * 1024 - 200)}`;

const bodies: Record<string, (model: string) => unknown> = {
  '/vendor-a/v1/chat/completions': (model) => ({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  '/vendor-a/v1/responses': (model) => ({ model, input: 'Hi' }),
  '/vendor-b/v1/messages': (model) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
};

for (const [path, body] of Object.entries(bodies)) {
  t.test(`${path}: a 1 MB model name is echoed as its first 200 characters and its length`, async (t) => {
    const res = await viaRelay(relay, path, claude.relayKey, body(LONG));
    t.equal(res.status, 404);
    const message = messageOf(res.text);
    t.ok(message.length < 400, `the message is bounded (${message.length} characters)`);
    t.ok(message.includes(HEAD), 'its first 200 characters');
    t.notOk(message.includes(`${HEAD}x`), 'nothing after them');
    t.match(message, /1048576 characters/, 'its full length');
  });

  t.test(`${path}: a short unknown model is echoed exactly`, async (t) => {
    const res = await viaRelay(relay, path, claude.relayKey, body('no-such-model'));
    t.equal(res.status, 404);
    t.equal(messageOf(res.text), 'The model `no-such-model` does not exist.');
  });
}

t.test('a name of exactly 200 characters is echoed whole', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', claude.relayKey, bodies['/vendor-a/v1/chat/completions']!(HEAD));
  t.equal(messageOf(res.text), `The model \`${HEAD}\` does not exist.`);
});

t.test('an unknown item_reference id is echoed bounded', async (t) => {
  const id = `msg_${'i'.repeat(100_000)}`;
  const res = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, { model: 'echo-claude', input: [{ type: 'item_reference', id }] });
  t.equal(res.status, 404);
  const message = messageOf(res.text);
  t.ok(message.length < 400, `the message is bounded (${message.length} characters)`);
  t.match(message, /100004 characters/);
});


t.test('an admin request with a 100 KB unknown field name: a 400 naming it bounded', async (t) => {
  const name = `f${'k'.repeat(100_000)}`;
  const res = await relay.api('POST', '/api/providers', { name: 'p-long-field', [name]: 1 });
  t.equal(res.status, 400);
  const error = (res.body as { error: { message: string; field?: string } }).error;
  t.ok(error.message.length < 400, `the message is bounded (${error.message.length} characters)`);
  t.match(error.message, /unknown field/, 'it says what is wrong');
  t.match(error.message, /100002 characters/, "and the pointer's full length");
  t.ok((error.field ?? '').length < 300, 'the field is bounded too');
});

t.test('a log query with an 8 KB unknown parameter name (within the head limit): a 400 naming it bounded', async (t) => {
  const name = `q${'k'.repeat(8_000)}`;
  const res = await relay.api('GET', `/api/logs?${name}=1`);
  t.equal(res.status, 400);
  const error = (res.body as { error: { message: string } }).error;
  t.ok(error.message.length < 400, `the message is bounded (${error.message.length} characters)`);
});
