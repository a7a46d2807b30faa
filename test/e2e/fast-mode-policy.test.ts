// A policy's limit on premium-priced fast modes (fastModes): OpenAI's priority processing
// (service_tier "priority", Codex's Fast) and Anthropic's fast mode (speed "fast", Claude Code's
// /fast) cost 2-6x the standard rates. `allow` (the default) sends them as asked; `standard` sends
// the request at the standard speed (service_tier "default"; speed left out), says so in
// x-relay-fast-mode and the usage record, and keeps every other byte; `refuse` answers 403 in the
// client's own error shape without calling the upstream. Other tiers (flex, auto) are untouched.
import t from 'tap';
import { seedRoute } from '../../core/testing.ts';
import { relayWithUpstream, settled, usageRecord } from '../support/relay-client.ts';

const { relay, up } = await relayWithUpstream(t);

type Limit = 'allow' | 'standard' | 'refuse' | undefined;
const routesFor = async (limit: Limit) => {
  const policy = { modelIds: '*' as const, ...(limit ? { fastModes: limit } : {}) };
  const tag = limit ?? 'default';
  return {
    gpt: await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `gpt-${tag}`, upstreamModel: 'gpt-5.5', shapes: ['openai.chat', 'openai.responses'], policy }),
    claude: await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: `claude-${tag}`, upstreamModel: 'claude-opus-4-8', policy }),
  };
};
const unset = await routesFor(undefined);
const allow = await routesFor('allow');
const standard = await routesFor('standard');
const refuse = await routesFor('refuse');
const all = [unset, allow, standard, refuse].flatMap((r) => [r.gpt, r.claude]);
await settled(relay, (s) => all.every((x) => s.relayKeys.has(x.relayKeyId)));

const chatText = (model: string, tier: string) =>
  `{"model":"${model}", "messages":[{"role":"user","content":"caf\\u00e9 \u2014 hi"}],\n "service_tier":"${tier}","temperature":0.5}`;
const messagesText = (model: string, extra = ',"speed":"fast"') =>
  `{"model":"${model}","max_tokens":64${extra},"messages":[{"role":"user","content":"hi"}]}`;

async function send(path: string, key: string, text: string) {
  const before = up.count;
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
  const body = await res.text();
  return { res, body, upstream: up.count > before ? up.lastRequest()! : null };
}

t.test('allow, and a policy without the field: the ask goes as sent', async (t) => {
  for (const routes of [unset, allow]) {
    const chat = await send('/vendor-a/v1/chat/completions', routes.gpt.relayKey, chatText(routes.gpt.modelSlug, 'priority'));
    t.equal(chat.res.status, 200);
    t.equal(chat.upstream?.json.service_tier, 'priority');
    t.equal(chat.res.headers.get('x-relay-fast-mode'), null);
    const messages = await send('/vendor-b/v1/messages', routes.claude.relayKey, messagesText(routes.claude.modelSlug));
    t.equal(messages.res.status, 200);
    t.equal(messages.upstream?.json.speed, 'fast');
  }
});

t.test('standard: priority becomes default in place, every other byte kept; the answer and the record say so', async (t) => {
  const text = chatText(standard.gpt.modelSlug, 'priority');
  const chat = await send('/vendor-a/v1/chat/completions', standard.gpt.relayKey, text);
  t.equal(chat.res.status, 200);
  t.equal(chat.res.headers.get('x-relay-fast-mode'), 'standard');
  const sent = chat.upstream!.body.toString('utf8');
  t.equal(sent, text.replace(`"model":"${standard.gpt.modelSlug}"`, '"model":"gpt-5.5"').replace('"service_tier":"priority"', '"service_tier":"default"'), 'escapes, whitespace and order as the client sent them');
  const record = await usageRecord(relay, chat.res.headers.get('x-request-id')!);
  t.equal(record.extras.fast_mode, 'standard, asked service_tier=priority');

  const streamed = await send('/vendor-a/v1/responses', standard.gpt.relayKey, `{"model":"${standard.gpt.modelSlug}","input":"hi","stream":true,"service_tier":"priority"}`);
  t.equal(streamed.res.status, 200);
  t.equal(streamed.upstream?.json.service_tier, 'default', 'Responses, streamed');
  t.equal(streamed.res.headers.get('x-relay-fast-mode'), 'standard');
});

t.test('standard: Anthropic\'s speed "fast" is left out', async (t) => {
  const messages = await send('/vendor-b/v1/messages', standard.claude.relayKey, messagesText(standard.claude.modelSlug));
  t.equal(messages.res.status, 200);
  t.equal(messages.res.headers.get('x-relay-fast-mode'), 'standard');
  t.notOk('speed' in messages.upstream!.json, 'speed is not sent');
  t.same(messages.upstream!.json, { model: 'claude-opus-4-8', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
  const record = await usageRecord(relay, messages.res.headers.get('x-request-id')!);
  t.equal(record.extras.fast_mode, 'standard, asked speed=fast');
});

t.test('other tiers and speeds are not fast modes: untouched under standard and refuse', async (t) => {
  for (const routes of [standard, refuse]) {
    for (const tier of ['flex', 'auto', 'default']) {
      const text = chatText(routes.gpt.modelSlug, tier);
      const chat = await send('/vendor-a/v1/chat/completions', routes.gpt.relayKey, text);
      t.equal(chat.res.status, 200, tier);
      t.equal(chat.upstream?.json.service_tier, tier);
      t.equal(chat.res.headers.get('x-relay-fast-mode'), null);
    }
    const plain = await send('/vendor-b/v1/messages', routes.claude.relayKey, messagesText(routes.claude.modelSlug, ''));
    t.equal(plain.res.status, 200);
    const slow = await send('/vendor-b/v1/messages', routes.claude.relayKey, messagesText(routes.claude.modelSlug, ',"speed":"standard"'));
    t.equal(slow.upstream?.json.speed, 'standard');
  }
});

t.test('refuse: 403 in the client\'s shape naming what was asked, and the upstream is not called', async (t) => {
  const chat = await send('/vendor-a/v1/chat/completions', refuse.gpt.relayKey, chatText(refuse.gpt.modelSlug, 'priority'));
  t.equal(chat.res.status, 403);
  t.equal(chat.upstream, null);
  const error = JSON.parse(chat.body).error;
  t.match(error, { code: 'RELAY_ERR_FAST_MODE_NOT_ALLOWED', message: /service_tier "priority"/ });
  const messages = await send('/vendor-b/v1/messages', refuse.claude.relayKey, messagesText(refuse.claude.modelSlug));
  t.equal(messages.res.status, 403);
  t.equal(messages.upstream, null);
  t.match(JSON.parse(messages.body), { type: 'error', error: { type: 'permission_error', message: /speed "fast"/ } });
  const responses = await send('/vendor-a/v1/responses', refuse.gpt.relayKey, `{"model":"${refuse.gpt.modelSlug}","input":"hi","service_tier":"priority"}`);
  t.equal(responses.res.status, 403);
});

t.test('the ask is read as the upstream reads it: an escaped key counts, a second one is refused', async (t) => {
  const escaped = await send('/vendor-a/v1/chat/completions', refuse.gpt.relayKey,
    `{"model":"${refuse.gpt.modelSlug}","messages":[{"role":"user","content":"hi"}],"service\\u005ftier":"priority"}`);
  t.equal(escaped.res.status, 403, 'service\\u005ftier is service_tier to a JSON parser');
  for (const key of [allow.gpt.relayKey, refuse.gpt.relayKey]) {
    const twice = await send('/vendor-a/v1/chat/completions', key,
      `{"model":"${refuse.gpt.modelSlug}","messages":[],"service_tier":"default","service_tier":"priority"}`);
    t.equal(twice.res.status, 400, 'a parser keeping the first would be allowed one value and served another');
    t.match(JSON.parse(twice.body).error.message, /'service_tier' appears more than once/);
    t.equal(twice.upstream, null);
  }
  const speedTwice = await send('/vendor-b/v1/messages', standard.claude.relayKey, messagesText(standard.claude.modelSlug, ',"speed":"standard","speed":"fast"'));
  t.equal(speedTwice.res.status, 400);
});

t.test('a translated request never carries the ask; refuse still answers 403', async (t) => {
  // A Messages client on the OpenAI model, and a Chat client on the Claude one.
  const toOpenAI = await send('/vendor-b/v1/messages', standard.gpt.relayKey, messagesText(standard.gpt.modelSlug));
  t.equal(toOpenAI.res.status, 200);
  t.notOk('speed' in toOpenAI.upstream!.json);
  t.notOk('service_tier' in toOpenAI.upstream!.json);
  t.match(toOpenAI.res.headers.get('x-relay-dropped'), /speed/);
  t.equal(toOpenAI.res.headers.get('x-relay-fast-mode'), 'standard');
  const toClaude = await send('/vendor-a/v1/chat/completions', refuse.claude.relayKey, chatText(refuse.claude.modelSlug, 'priority'));
  t.equal(toClaude.res.status, 403);
});

t.test('the policy field is checked', async (t) => {
  const res = await relay.api('POST', '/api/policies', { metadata: { displayName: 'bad fast modes' }, spec: { tier: 'relay', modelIds: '*', fastModes: 'sometimes' } });
  t.equal(res.status, 400);
  t.match(JSON.stringify(res.body), /fastModes/);
});
