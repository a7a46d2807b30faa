// Requests the size of a coding agent's turn (test/bench/agent-bodies.ts) through the inference
// lane, which reads `model` and `stream` in place and parses the whole body only when it must
// (inference-body.ts): passthrough forwards them byte for byte and records them, translation
// still gets the parsed body, a body broken deep inside is refused as before, and routing reads
// the model JSON.parse would read.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, usageRecord, viaRelay } from '../support/relay-client.ts';
import { claudeCodeBody, codexBody } from '../bench/agent-bodies.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'agent-gpt' });
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'agent-claude' });
await routeLive(relay, gpt);
await routeLive(relay, claude);

for (const [name, path, seeded, raw, done] of [
  ['a Codex turn', '/vendor-a/v1/responses', gpt, codexBody(400_000, 'agent-gpt'), 'response.completed'],
  ['a Claude Code turn', '/vendor-b/v1/messages', claude, claudeCodeBody(400_000, 'agent-claude'), 'message_stop'],
] as const) {
  t.test(`${name} (${Math.round(raw.length / 1024)} KB) passes through byte for byte`, async (t) => {
    const seen = up.requests.length;
    const res = await viaRelay(relay, path, seeded.relayKey, raw.toString('utf8'));
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.match(res.text, done, 'the stream ran to its end');
    t.equal(up.requests.length, seen + 1);
    t.ok(up.requests.at(-1)!.body.equals(raw), 'the upstream got the bytes the client sent');
    const record = await usageRecord(relay, res.headers.get('x-request-id')!);
    t.match(record, { status: 200, model_requested: seeded.modelSlug, stream: true, relay_key_id: seeded.relayKeyId });
  });
}

t.test('a Claude Code turn refused by its first host key goes to the next with the same bytes', async (t) => {
  const twoKeys = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'agent-claude-keys', hostKeys: ['sk-first', 'sk-second'] });
  await routeLive(relay, twoKeys);
  const raw = claudeCodeBody(400_000, 'agent-claude-keys');
  up.enqueue(faults.rateLimit({ vendor: 'anthropic' }));
  const seen = up.requests.length;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', twoKeys.relayKey, raw.toString('utf8'));
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.match(res.text, 'message_stop');
  const [first, second] = up.requests.slice(seen);
  t.equal(up.requests.length, seen + 2, 'two attempts');
  t.same([first!.headers['x-api-key'], second!.headers['x-api-key']].sort(), ['sk-first', 'sk-second'], 'one attempt per key');
  t.ok(first!.body.equals(raw) && second!.body.equals(raw), 'both got the bytes the client sent');
});

t.test('a Claude Code turn to a binding that renames the model: only the model value changes', async (t) => {
  const renamed = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'agent-claude-alias', upstreamModel: 'claude-upstream-name' });
  await routeLive(relay, renamed);
  const raw = claudeCodeBody(400_000, 'agent-claude-alias');
  const res = await viaRelay(relay, '/vendor-b/v1/messages', renamed.relayKey, raw.toString('utf8'));
  t.equal(res.status, 200, res.text.slice(0, 300));
  const expected = raw.toString('utf8').replace('"model":"agent-claude-alias"', '"model":"claude-upstream-name"');
  t.not(expected, raw.toString('utf8'));
  t.equal(up.requests.at(-1)!.body.toString('utf8'), expected);
});

t.test('a Claude Code turn to a model on an OpenAI host is translated from the parsed body', async (t) => {
  const raw = claudeCodeBody(200_000, 'agent-gpt');
  const res = await viaRelay(relay, '/vendor-b/v1/messages', gpt.relayKey, raw.toString('utf8'));
  t.equal(res.status, 200, res.text.slice(0, 300));
  t.match(res.text, 'message_stop');
  const sent = JSON.parse(up.requests.at(-1)!.body.toString('utf8'));
  const asked = JSON.parse(raw.toString('utf8'));
  t.equal(sent.model, 'agent-gpt');
  t.equal(sent.tools.length, asked.tools.length, 'every tool reached the upstream');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(record, { status: 200, inbound_shape: 'anthropic.messages', model_requested: 'agent-gpt' });
});

t.test('a big body broken near its end is refused with 400 naming where, and nothing is sent', async (t) => {
  const raw = claudeCodeBody(400_000, 'agent-claude').toString('utf8');
  // A raw control character inside the last tool result: JSON forbids it in a string.
  const at = raw.lastIndexOf('line 59');
  const broken = `${raw.slice(0, at)}\u0001${raw.slice(at)}`;
  const seen = up.requests.length;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, broken);
  t.equal(res.status, 400);
  const body = JSON.parse(res.text);
  t.equal(body.type, 'error');
  t.match(body.error.message, /not valid JSON.*position \d+/);
  t.equal(up.requests.length, seen, 'the upstream was not asked');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(record, { status: 400, error_code: 'RELAY_ERR_INVALID_JSON', relay_key_id: claude.relayKeyId });
});

t.test('routing reads the model JSON.parse reads: an escaped key', async (t) => {
  const text = '{"mod\\u0065l":"agent-claude","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}';
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, text);
  t.equal(res.status, 200, `${text}: ${res.text.slice(0, 200)}`);
  t.equal(up.requests.at(-1)!.body.toString('utf8'), text, 'forwarded as sent');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.model_requested, 'agent-claude');
});

t.test('a model written twice is a 400 in the wire\'s shape, and nothing is forwarded', async (t) => {
  // Authorized as the last value, served as the first by an upstream that keeps the first key.
  for (const text of [
    '{"model":"not-granted","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"model":"agent-claude"}',
    '{"model":"agent-claude","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"mod\\u0065l":"not-granted"}',
  ]) {
    const seen = up.requests.length;
    const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, text);
    t.equal(res.status, 400, text);
    t.match(JSON.parse(res.text), { type: 'error', error: { type: 'invalid_request_error', message: /'model' appears more than once/ } });
    t.equal(up.requests.length, seen, 'the upstream was not asked');
  }
});

t.test('stream: null is no stream; a stream that is not a boolean is refused', async (t) => {
  const plain = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, { model: 'agent-claude', max_tokens: 16, stream: null, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(plain.status, 200);
  t.equal(JSON.parse(plain.text).type, 'message', 'a JSON answer, not a stream');
  const bad = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, { model: 'agent-claude', max_tokens: 16, stream: 'yes', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(bad.status, 400);
  t.match(JSON.parse(bad.text).error.message, "'stream' must be a boolean");
});
