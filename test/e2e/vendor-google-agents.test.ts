// The real coding agents through Relay to Google's clouds, each completing a tool round trip:
//   - `codex exec` (agent-codex, Responses) -> Gemini on Vertex AI (translated): Gemini calls
//     apply_patch, Codex creates the file, the functionResponse goes back, Gemini answers.
//   - `claude -p` (Messages, a relay key) -> Claude on Vertex AI (passed through, rawPredict):
//     Claude calls Write, Claude Code creates the file, the tool_result goes back.
// The fake Google upstream (test/support/fake-google.ts) issues OAuth tokens only for assertions
// signed with the service account's key, and Vertex accepts only those tokens.
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { claudeBinary, cliEnv, codexBinary, jsonLines, runCli } from '../support/agent-cli.ts';
import { FINAL_TEXT, HELLO_PATCH } from '../support/agent-turns.ts';
import { codexHome } from '../support/codex-home.ts';
import { serviceAccountKey, startFakeGoogle } from '../support/fake-google.ts';
import { routeLive } from '../support/relay-client.ts';

const CLI_TIMEOUT_MS = 90_000;
const account = serviceAccountKey();
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }, { use: 'vendor-google' }] });
t.teardown(() => relay.close());

function tempDir(t: { teardown(fn: () => void): void }, prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function logsFor(predicate: (e: any) => boolean, count: number): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    const res = await relay.api('GET', '/api/logs?limit=100');
    found = (res.body.items as any[]).filter(predicate);
    return found.length >= count;
  }, 10_000, 100);
  return found;
}

t.test('codex exec -> Relay -> Gemini on Vertex AI: apply_patch round trip', async (t) => {
  const google = await startFakeGoogle({ serviceAccounts: [account], text: FINAL_TEXT, functionCall: { name: 'apply_patch', args: { input: HELLO_PATCH } } });
  t.teardown(() => google.close());
  const seeded = await seedRoute(relay, {
    baseUrl: `${google.url}/v1`, adapter: 'google', model: 'codex-gemini', upstreamModel: 'gemini-2.5-pro', hostKeys: [account.json],
    hostOptions: { mode: 'vertex', project: 'acme', location: 'us-central1', tokenUrl: `${google.url}/token` },
  });
  await routeLive(relay, seeded);
  const doc = await (await fetch(`${relay.inferenceUrl}/agent-a/v1/models?client_version=0.169.0`, { headers: { authorization: `Bearer ${seeded.relayKey}` } })).text();
  const home = codexHome({ baseUrl: `${relay.inferenceUrl}/agent-a/v1`, model: 'codex-gemini', modelsJson: doc });
  t.teardown(home.cleanup);
  const run = await runCli(codexBinary(), ['exec', '--skip-git-repo-check', '--json', '-C', home.work, 'Create hello.txt containing hello.'], {
    cwd: home.work, env: cliEnv({ HOME: home.dir, CODEX_HOME: home.dir, RELAY_KEY: seeded.relayKey }), timeoutMs: CLI_TIMEOUT_MS,
  });
  t.notOk(run.timedOut, `codex finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `codex exec exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const file = path.join(home.work, 'hello.txt');
  t.ok(existsSync(file), 'apply_patch created the file');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');
  const events = jsonLines(run.stdout);
  t.ok(events.some((e) => e.type === 'item.completed' && e.item?.type === 'agent_message' && e.item.text === FINAL_TEXT), 'the final message');

  const calls = google.requests.filter((r) => r.api === 'vertex-google');
  t.ok(calls.length >= 2, 'two model calls to Vertex');
  const declared = calls[0]!.json.tools[0].functionDeclarations.find((d: any) => d.name === 'apply_patch');
  t.same(declared?.parametersJsonSchema?.required, ['input'], 'apply_patch is a function with one string parameter');
  const answered = calls.at(-1)!.json.contents.flatMap((c: any) => c.parts).find((p: any) => p.functionResponse);
  t.equal(answered?.functionResponse.name, 'apply_patch', 'the tool output goes back as a functionResponse');
  t.match(calls[0]!.headers.authorization, /^Bearer ya29\.fake-/);
  t.equal(google.tokenRequests.filter((r) => r.accepted).length, 1, 'one token for the whole turn');
  const logged = await logsFor((e) => e.model_slug === 'codex-gemini' && e.client === 'codex', 2);
  for (const e of logged) t.match(e, { status: 200, inbound_shape: 'openai.responses', upstream_shape: 'gemini.generate' });
});

t.test('claude -p -> Relay -> Claude on Vertex AI (passed through): a Write round trip', async (t) => {
  const home = tempDir(t, 'relay-claude-home-');
  const work = tempDir(t, 'relay-claude-work-');
  const file = path.join(work, 'hello.txt');
  const google = await startFakeGoogle({ serviceAccounts: [account], text: FINAL_TEXT, functionCall: { name: 'Write', args: { file_path: file, content: 'hello\n' } } });
  t.teardown(() => google.close());
  const seeded = await seedRoute(relay, {
    baseUrl: `${google.url}/v1`, adapter: 'vertex-anthropic', model: 'claude-vertex', upstreamModel: 'claude-sonnet-4-5@20250929', hostKeys: [account.json],
    hostOptions: { mode: 'vertex', project: 'acme', location: 'us-east5', tokenUrl: `${google.url}/token` },
  });
  await routeLive(relay, seeded);
  const env = cliEnv({
    HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: `${relay.inferenceUrl}/vendor-b`, ANTHROPIC_API_KEY: seeded.relayKey,
    ANTHROPIC_MODEL: 'claude-vertex', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-vertex',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_MAX_RETRIES: '0',
  });
  const run = await runCli(claudeBinary(), ['-p', 'Create hello.txt containing hello.', '--output-format', 'json', '--permission-mode', 'acceptEdits'], { cwd: work, env, timeoutMs: CLI_TIMEOUT_MS });
  t.notOk(run.timedOut, `claude finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `claude exits 0 (stderr: ${run.stderr.slice(-800)}; stdout: ${run.stdout.slice(-400)})`);
  const result = JSON.parse(run.stdout || '{}');
  t.equal(result.result, FINAL_TEXT);
  t.ok(existsSync(file), 'Write created the file');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');

  const calls = google.requests.filter((r) => r.api === 'vertex-anthropic' && r.model !== 'count-tokens');
  t.ok(calls.length >= 2, 'two model calls to Vertex');
  for (const c of calls) {
    t.equal(c.json.anthropic_version, 'vertex-2023-10-16');
    t.notOk('model' in c.json, 'the model is in the URL');
    t.notOk(c.headers['x-api-key'], 'the relay key does not go upstream');
  }
  t.ok(calls.some((c) => c.method === 'streamRawPredict'), 'Claude Code streams');
  const last = calls.at(-1)!.json.messages.at(-1);
  t.equal(last.content[0].type, 'tool_result', 'the tool_result goes back');
  const logged = await logsFor((e) => e.model_slug === 'claude-vertex' && e.status === 200, 2);
  for (const e of logged) t.match(e, { inbound_shape: 'anthropic.messages', upstream_shape: 'anthropic.messages' });
});
