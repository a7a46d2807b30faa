// Claude Code through Relay in proxy mode, end to end: the real `claude -p` (npm
// @anthropic-ai/claude-code, pinned) against a fake Anthropic upstream that accepts only the
// client's own key and checks that no X-GW-* header and no relay key reach it. The turn includes a
// Write tool call that creates a file. Also: the statuses Claude Code sees for a missing or wrong
// relay key, a model the policy does not grant, and upstream errors, which arrive unmodified.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRelay, seedRoute, eventually, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { anthropic, faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { FINAL_TEXT, messagesToolUseScript } from '../support/agent-turns.ts';
import { claudeBinary, cliEnv, runCli } from '../support/agent-cli.ts';

const CLI_TIMEOUT_MS = 60_000;
const CLIENT_KEY = 'sk-ant-client-own-key';

const relay = await startRelay({ plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS, { use: 'payload-file' }] });
const up = await startFakeUpstream({ apiKey: CLIENT_KEY });
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const seeded = await seedRoute(relay, {
  baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-relay', hostKeys: ['sk-host-key-never-sent'], policy: { payloadLoggingEnabled: true },
});
// A model that exists but that this key's policy does not grant.
const other = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-other' });
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 2);
const settings = await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 4 * 1024 * 1024 });
if (settings.status !== 200) throw new Error(`payload logging: ${settings.status}`);

const BASE = `${relay.inferenceUrl}/vendor-b`;
const EXAMPLE_ENV = path.resolve(import.meta.dirname, '../../examples/claude-code/env.sh');

function expectCleanUpstream(): void {
  up.expectHeader('x-api-key', CLIENT_KEY);
  up.expectHeader('x-gw-api-key', undefined);
  up.expectHeader('x-gw-proxy-mode', undefined);
  up.expectHeader('authorization', undefined);
}

/** The usage events attributed to Claude Code, once `count` of them are readable. */
async function claudeCodeEvents(count: number): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    const res = await relay.api('GET', '/api/logs?limit=100');
    // Its calls to the Messages API (anything else it asks, such as a model list, is recorded too, without a model).
    found = (res.body.items as any[]).filter((e) => e.client === 'claude-code' && e.model_requested !== null);
    return found.length >= count;
  }, 10_000, 100);
  return found;
}

/** examples/claude-code/env.sh, sourced as a user would, with this run's Relay, keys and model. */
function exampleEnv(relayKey: string): Record<string, string> {
  const out = execFileSync('/bin/sh', ['-c', `. ${JSON.stringify(EXAMPLE_ENV)} && env`], {
    env: { PATH: process.env.PATH ?? '', RELAY_URL: BASE.replace(/\/vendor-b$/, ''), ANTHROPIC_API_KEY: CLIENT_KEY, RELAY_KEY: relayKey, RELAY_MODEL: 'claude-relay' },
    encoding: 'utf8',
  });
  const env: Record<string, string> = {};
  // Values may span lines (ANTHROPIC_CUSTOM_HEADERS): a line without NAME= continues the last one.
  let last = '';
  for (const line of out.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[(last = m[1]!)] = m[2]!;
    else if (last) env[last] += `\n${line}`;
  }
  for (const name of Object.keys(env)) if (!name.startsWith('ANTHROPIC_') && !/^(CLAUDE_CODE_|DISABLE_)/.test(name)) delete env[name];
  env.ANTHROPIC_CUSTOM_HEADERS = env.ANTHROPIC_CUSTOM_HEADERS!.replace(/\n$/, '');
  return env;
}

function claudeEnv(home: string, relayKey: string, extraHeaders = ''): Record<string, string> {
  const example = exampleEnv(relayKey);
  return cliEnv({
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ...example,
    ANTHROPIC_CUSTOM_HEADERS: `${example.ANTHROPIC_CUSTOM_HEADERS}${extraHeaders}`,
    CLAUDE_CODE_MAX_RETRIES: '0',
  });
}

function tempDirs(t: { teardown(fn: () => void): void }) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-home-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-work-'));
  t.teardown(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  return { home, work };
}

/** Files under `dir` whose content includes `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (readFileSync(file).includes(needle)) hits.push(file);
  }
  return hits;
}

// No --model: the example's env.sh names the model (ANTHROPIC_MODEL), as the README runs it.
const claudeArgs = (prompt: string) => ['-p', prompt, '--output-format', 'json', '--permission-mode', 'acceptEdits'];

t.test('claude -p -> Relay (proxy mode) -> Anthropic: a turn with a Write tool call', async (t) => {
  const { home, work } = tempDirs(t);
  up.reset();
  expectCleanUpstream();
  const file = path.join(work, 'hello.txt');
  up.script(messagesToolUseScript('Write', { file_path: file, content: 'hello\n' }));

  const run = await runCli(claudeBinary(), claudeArgs('Create hello.txt containing hello.'), { cwd: work, env: claudeEnv(home, seeded.relayKey), timeoutMs: CLI_TIMEOUT_MS });
  t.notOk(run.timedOut, `claude finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `claude exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const result = JSON.parse(run.stdout);
  t.equal(result.is_error, false);
  t.equal(result.result, FINAL_TEXT);
  t.ok(existsSync(file), 'the Write tool created the file in the work directory');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');

  t.same(up.violations, [], 'the upstream got the client\'s own key and no X-GW-* header');
  const calls = up.requests.filter((r) => r.pathname === '/v1/messages');
  t.ok(calls.length >= 2, 'the tool call and the final turn');
  for (const r of calls) {
    t.equal(r.query.get('beta'), 'true', '?beta=true is forwarded');
    t.equal(r.headers['anthropic-version'], '2023-06-01');
    t.match(r.headers['anthropic-beta'], /claude-code-20250219/, 'anthropic-beta reaches the upstream unchanged');
    t.equal(r.headers['x-app'], 'cli');
    t.ok(r.rawHeaders.every((h, i) => i % 2 === 1 || !/^x-gw-/i.test(h)), 'no X-GW-* header, in any case');
    t.notOk(JSON.stringify(r.headers).includes(seeded.relayKey), 'the relay key never reaches the upstream');
  }

  const all = await claudeCodeEvents(calls.length);
  for (const e of all) {
    t.equal(e.status, 200);
    t.equal(e.relay_key_id, seeded.relayKeyId, 'attributed to the relay key');
    t.equal(e.host_key_id, null, 'no host key was used');
    t.equal(e.upstream_shape, 'anthropic.messages');
    t.equal(e.extras.proxy_mode, 'true');
    t.equal(e.extras['x-claude-code-session-id'], result.session_id, 'Claude Code\'s session id');
  }
  // Payloads are queued apart from usage events and may reach their backend a flush later.
  let detail: { status: number; body: any } = { status: 0, body: null };
  await eventually(async () => {
    detail = await relay.api('GET', `/api/logs/${all[0].request_id}`);
    return detail.status === 200 && detail.body.request_body !== undefined;
  }, 5_000, 50).catch(() => undefined);
  t.equal(detail.status, 200);
  t.match(String(detail.body.request_body), /"model":"claude-relay"/, 'the request body is captured');
  t.match(String(detail.body.response_body), /message_stop/, 'and the streamed response');
  const dump = JSON.stringify(detail.body);
  t.notOk(dump.includes(CLIENT_KEY), 'the client\'s credential is not in the log record');
  t.notOk(dump.includes(seeded.relayKey), 'nor the relay key');
  t.ok(filesContaining(relay.dataDir, result.session_id).length > 0, 'Relay wrote the request to files');
  t.notOk(filesContaining(relay.dataDir, CLIENT_KEY).length > 0, 'no file Relay wrote (usage log, payloads) holds the client\'s credential');
});

t.test('claude -p with a wrong relay key fails with the 401 Relay sent', async (t) => {
  const { home, work } = tempDirs(t);
  up.reset();
  const run = await runCli(claudeBinary(), claudeArgs('hi'), { cwd: work, env: claudeEnv(home, 'rk_wrong'), timeoutMs: CLI_TIMEOUT_MS });
  t.notOk(run.timedOut);
  t.not(run.code, 0, 'claude reports the failure');
  t.match(run.stdout + run.stderr, /401|Invalid relay key|authentication/i);
  t.equal(up.count, 0, 'nothing reached the upstream');
});

// ------------------------------------------------------------------ statuses, over HTTP as Claude Code sends them

const messageBody = (model: string) => JSON.stringify({ model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] });

async function proxied(headers: Record<string, string>, body: string, url = `${BASE}/v1/messages?beta=true`) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219', 'x-api-key': CLIENT_KEY, ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
const proxyHeaders = (key: string) => ({ 'X-GW-API-Key': key, 'X-GW-Proxy-Mode': '1' });

t.test('missing relay key in proxy mode: 401, Anthropic-shaped', async (t) => {
  up.reset();
  const res = await proxied({ 'X-GW-Proxy-Mode': '1' }, messageBody('claude-relay'));
  t.equal(res.status, 401);
  const body = JSON.parse(res.text);
  t.equal(body.type, 'error');
  t.equal(body.error.type, 'authentication_error');
  t.equal(up.count, 0);
});

t.test('wrong relay key: 401', async (t) => {
  up.reset();
  const res = await proxied(proxyHeaders('rk_not_a_real_key'), messageBody('claude-relay'));
  t.equal(res.status, 401);
  t.notOk(res.text.includes('rk_not_a_real_key'), 'the presented key is not echoed');
  t.equal(up.count, 0);
});

t.test('a model the policy does not grant: 403; an unknown model: 404', async (t) => {
  up.reset();
  const denied = await proxied(proxyHeaders(seeded.relayKey), messageBody(other.modelSlug));
  t.equal(denied.status, 403);
  t.equal(JSON.parse(denied.text).error.type, 'permission_error');
  const unknown = await proxied(proxyHeaders(seeded.relayKey), messageBody('no-such-model'));
  t.equal(unknown.status, 404);
  t.equal(up.count, 0);
});

t.test('upstream errors arrive unmodified: status, retry-after and body bytes', async (t) => {
  for (const action of [faults.rateLimit({ vendor: 'anthropic', retryAfter: 3 }), faults.serverError({ vendor: 'anthropic', status: 529 }), faults.unauthorized({ vendor: 'anthropic' })]) {
    up.reset();
    up.enqueue(action);
    const res = await proxied(proxyHeaders(seeded.relayKey), messageBody('claude-relay'));
    const expected = JSON.stringify(action.body);
    t.equal(res.status, action.status, `status ${action.status}`);
    t.equal(res.text, expected, `body of the ${action.status} byte for byte`);
    if (action.status === 429) t.equal(res.headers.get('retry-after'), '3');
    t.equal(up.count, 1, 'no failover to a host key');
  }
  up.reset();
  const wrongClientKey = await proxied({ ...proxyHeaders(seeded.relayKey), 'x-api-key': 'sk-ant-wrong' }, messageBody('claude-relay'));
  t.equal(wrongClientKey.status, 401, 'the upstream refused the client\'s own key');
  t.same(JSON.parse(wrongClientKey.text).error, { type: 'authentication_error', message: 'invalid x-api-key' }, 'the upstream\'s own 401');
});

t.test('a streamed answer arrives byte for byte; count_tokens and the HEAD probe work', async (t) => {
  up.reset();
  const res = await proxied(proxyHeaders(seeded.relayKey), messageBody('claude-relay'));
  t.equal(res.status, 200);
  t.equal(res.text, anthropic.events({ model: 'claude-relay' }).join(''), 'the upstream\'s SSE bytes');
  const count = await proxied(proxyHeaders(seeded.relayKey), JSON.stringify({ model: 'claude-relay', messages: [{ role: 'user', content: 'hi' }] }), `${BASE}/v1/messages/count_tokens?beta=true`);
  t.equal(count.status, 200);
  t.match(JSON.parse(count.text), { input_tokens: Number });
  t.equal(up.lastRequest()!.path, '/v1/messages/count_tokens?beta=true');
  t.equal(up.lastRequest()!.headers['x-api-key'], CLIENT_KEY);
  const head = await fetch(BASE, { method: 'HEAD' });
  t.ok(head.status < 500, `HEAD ${BASE} is answered (${head.status})`);
});
