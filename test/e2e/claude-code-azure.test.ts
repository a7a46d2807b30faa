// The real Claude Code through Relay to an Azure OpenAI deployment (vendor-azure-openai): its
// Messages requests are translated to Chat Completions at the deployment URL with the api-key
// header, and the turn completes a Write tool round trip (the model's answers come from a
// scripted fake behind the fake Azure resource).
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { openai, startFakeUpstream, type ScriptFn } from '../support/fake-upstream.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { FINAL_TEXT } from '../support/agent-turns.ts';
import { claudeBinary, cliEnv, runCli } from '../support/agent-cli.ts';

const CLI_TIMEOUT_MS = 60_000;
const API_KEY = 'azure-key-for-claude-code';
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

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }] });
const model = await startFakeUpstream();
const azure = await startFakeAzure({ apiKey: API_KEY, deployments: { 'gpt-4o-prod': 'gpt-4o' }, backend: model.url });
t.teardown(async () => {
  await relay.close();
  await azure.close();
  await model.close();
});
const seeded = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'claude-azure', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY] });
await eventually(() => relay.relay.sync.snapshot().relayKeys.has(seeded.relayKeyId));

t.test('claude -p -> Relay -> Azure OpenAI deployment (translated): a Write tool round trip', async (t) => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-home-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-work-'));
  t.teardown(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const file = path.join(work, 'hello.txt');
  model.script(chatWriteScript(file));
  const env = cliEnv({
    HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: `${relay.inferenceUrl}/vendor-b`, ANTHROPIC_API_KEY: seeded.relayKey,
    ANTHROPIC_MODEL: 'claude-azure', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-azure',
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
  const calls = azure.requests.filter((r) => r.path === '/openai/deployments/gpt-4o-prod/chat/completions');
  t.ok(calls.length >= 2, 'the tool call and the final turn reached the deployment');
  for (const call of calls) {
    t.equal(call.query.get('api-version'), '2024-10-21');
    t.equal(call.headers['api-key'], API_KEY, 'the host key as api-key');
    t.notOk(JSON.stringify(call.headers).includes(seeded.relayKey), 'the relay key never reaches Azure');
  }
  t.ok(calls.some((c) => (JSON.parse(c.body) as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool')), 'the tool result came back as a tool message');
});
