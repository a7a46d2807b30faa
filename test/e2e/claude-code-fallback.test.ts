// The real Claude Code through Relay while its Anthropic model is overloaded (every request a 529):
// Relay falls back to an OpenAI-shaped model (spec.fallbacks), translates each turn, and the
// session completes a Write tool round trip in the Messages shape it speaks (issue 42).
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { faults, openai, startFakeUpstream, type ScriptFn } from '../support/fake-upstream.ts';
import { FINAL_TEXT } from '../support/agent-turns.ts';
import { claudeBinary, cliEnv, runCli } from '../support/agent-cli.ts';
import { settled, usageRecord } from '../support/relay-client.ts';

const CLI_TIMEOUT_MS = 60_000;
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };

/** A Chat Completions model: a Write tool call until the request carries its result, then FINAL_TEXT. */
function chatWriteScript(file: string): ScriptFn {
  return (req) => {
    if (req.pathname !== '/v1/chat/completions') return undefined;
    const body = req.json as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean }; messages?: Array<{ role: string }> };
    const model = String(body.model ?? 'gpt');
    const answered = (body.messages ?? []).some((m) => m.role === 'tool');
    const options = answered ? { model, text: FINAL_TEXT, chunks: 3 } : { model, toolCall: { name: 'Write', input: { file_path: file, content: 'hello\n' } }, chunks: 4 };
    if (body.stream !== true) return { body: openai.chatCompletion(options) };
    return { headers: SSE_HEADERS, frames: openai.chatChunks({ ...options, includeUsage: body.stream_options?.include_usage === true }) };
  };
}

const relay = await startRelay({ plugins: DEFAULT_TEST_PLUGINS });
const claudeUp = await startFakeUpstream();
const gptUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
  await gptUp.close();
});
claudeUp.script((req) => (req.pathname === '/v1/messages' ? faults.serverError({ vendor: 'anthropic', status: 529 }) : undefined));
const gpt = await seedRoute(relay, { baseUrl: `${gptUp.url}/v1`, adapter: 'openai', model: 'gpt-fallback' });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'claude-primary' });
await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { modelIds: [claude.modelId, gpt.modelId] } });
await relay.api('PUT', `/api/models/by-id/${claude.modelId}`, { spec: { fallbacks: [{ modelId: gpt.modelId }] } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.policies.get(claude.policyId)?.spec.modelIds.length === 2
  && s.models.get(claude.modelId)?.spec.fallbacks?.length === 1 && s.hostKeysOfHost(claude.hostId).length === 1 && s.hostKeysOfHost(gpt.hostId).length === 1);

t.test('claude -p: the Anthropic model answers 529, the OpenAI fallback completes a Write tool round trip', async (t) => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-home-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-work-'));
  t.teardown(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const file = path.join(work, 'hello.txt');
  gptUp.script(chatWriteScript(file));
  const env = cliEnv({
    HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: `${relay.inferenceUrl}/vendor-b`, ANTHROPIC_API_KEY: claude.relayKey,
    ANTHROPIC_MODEL: 'claude-primary', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-primary',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_MAX_RETRIES: '0',
  });
  const run = await runCli(claudeBinary(), ['-p', 'Create hello.txt containing hello.', '--output-format', 'json', '--permission-mode', 'acceptEdits'], { cwd: work, env, timeoutMs: CLI_TIMEOUT_MS });
  t.notOk(run.timedOut, `claude finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `claude exits 0 (stdout: ${run.stdout.slice(-400)} stderr: ${run.stderr.slice(-800)})`);
  const result = JSON.parse(run.stdout) as { is_error: boolean; result: string };
  t.equal(result.is_error, false);
  t.equal(result.result, FINAL_TEXT);
  t.ok(existsSync(file), 'the Write tool created the file');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');

  const asked = claudeUp.requests.filter((r) => r.pathname === '/v1/messages');
  const served = gptUp.requests.filter((r) => r.pathname === '/v1/chat/completions');
  t.ok(asked.length >= 1, `the Anthropic model was asked (${asked.length})`);
  t.ok(served.length >= 2, `the OpenAI fallback served the tool call and the final turn (${served.length})`);
  t.ok(served.some((r) => (r.json as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool')), 'the tool result came back to the fallback');
  const last = served.at(-1)!;
  const record = await usageRecord(relay, String(last.headers['x-request-id']));
  t.equal(record.model_requested, 'claude-primary');
  t.equal(record.extras.relay_served_model, 'gpt-fallback');
});
