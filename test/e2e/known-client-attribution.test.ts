// Issue 38 item 11: known clients are attributed on every request, whatever the auth plugin and
// the route (core/attribution/): Claude Code with a relay key as its API key (no proxy mode),
// Codex on /vendor-a/v1/responses rather than its own /agent-a route, and the official SDKs by
// user agent; a refused request and a model list are attributed too. Real Relay (auth-bearer only,
// no auth-proxy), a fake upstream, usage events read back through GET /api/logs/{id}.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const openaiRoute = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-up', policy: { modelIds: '*' } });
const claudeRoute = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-up', policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(openaiRoute.relayKeyId) && s.relayKeys.has(claudeRoute.relayKeyId) && s.models.size >= 2);
const key = openaiRoute.relayKey;
const idOf = (headers: Headers) => headers.get('x-request-id')!;

const CLAUDE_CODE = { 'user-agent': 'claude-cli/2.1.0 (external, sdk-cli)', 'x-claude-code-session-id': 'sess-123', 'x-app': 'cli', 'anthropic-version': '2023-06-01' };
const messages = { model: 'claude-up', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

t.test('Claude Code with a relay key as its API key (no proxy mode)', async (t) => {
  const got = await viaRelay(relay, '/vendor-b/v1/messages', claudeRoute.relayKey, messages, CLAUDE_CODE);
  t.equal(got.status, 200);
  t.match(await usageRecord(relay, idOf(got.headers)), { client: 'claude-code', extras: { 'x-claude-code-session-id': 'sess-123' } });
  const byAgent = await viaRelay(relay, '/vendor-b/v1/messages', claudeRoute.relayKey, messages, { 'user-agent': 'claude-cli/2.1.0 (external, cli)' });
  t.match(await usageRecord(relay, idOf(byAgent.headers)), { client: 'claude-code' }, 'the user agent alone is enough');
});

t.test('Codex on /vendor-a/v1/responses', async (t) => {
  const got = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: 'gpt-up', input: 'hi' }, {
    originator: 'codex_exec', 'user-agent': 'codex_exec/0.169.0 (Ubuntu 24.4.0; x86_64) xterm', 'session-id': 'thread-1', 'x-codex-window-id': 'w-1',
  });
  t.equal(got.status, 200);
  t.match(await usageRecord(relay, idOf(got.headers)), { client: 'codex', extras: { originator: 'codex_exec', 'session-id': 'thread-1', 'x-codex-window-id': 'w-1' } });
});

t.test('the official SDKs, by user agent', async (t) => {
  const openai = new OpenAI({ apiKey: key, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
  const chat = await openai.chat.completions.create({ model: 'gpt-up', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  t.match(await usageRecord(relay, idOf(chat.response.headers)), { client: 'openai-sdk', extras: { 'user-agent': /^OpenAI\/JS / } });
  const anthropic = new Anthropic({ apiKey: claudeRoute.relayKey, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
  const message = await anthropic.messages.create(messages as Anthropic.MessageCreateParamsNonStreaming).withResponse();
  t.match(await usageRecord(relay, idOf(message.response.headers)), { client: 'anthropic-sdk', extras: { 'user-agent': /^Anthropic\/JS / } });
});

t.test('refused requests and model lists are attributed too; an unknown client is not', async (t) => {
  const refused = await viaRelay(relay, '/vendor-b/v1/messages', 'rk_wrong_key_0000000000000', messages, CLAUDE_CODE);
  t.equal(refused.status, 401);
  t.match(await usageRecord(relay, idOf(refused.headers)), { client: 'claude-code', status: 401 }, 'a wrong key');
  const noModel = await viaRelay(relay, '/vendor-b/v1/messages', claudeRoute.relayKey, { messages: [] }, CLAUDE_CODE);
  t.equal(noModel.status, 400);
  t.match(await usageRecord(relay, idOf(noModel.headers)), { client: 'claude-code', status: 400, relay_key_id: claudeRoute.relayKeyId }, 'refused before the pipeline');
  const list = await fetch(`${relay.inferenceUrl}/vendor-b/v1/models`, { headers: { authorization: `Bearer ${claudeRoute.relayKey}`, ...CLAUDE_CODE } });
  t.equal(list.status, 200);
  t.match(await usageRecord(relay, idOf(list.headers)), { client: 'claude-code', extras: { 'x-claude-code-session-id': 'sess-123' } }, 'a model list');
  const plain = await viaRelay(relay, '/vendor-b/v1/messages', claudeRoute.relayKey, messages, { 'user-agent': 'curl/8.5.0' });
  t.match(await usageRecord(relay, idOf(plain.headers)), { client: null }, 'curl');
});
