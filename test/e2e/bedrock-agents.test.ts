// The real Claude Code and Codex CLIs complete a tool round trip through Relay to a model on AWS
// Bedrock (the fake runtime: SigV4 verified, binary event stream). Claude Code: `claude -p`
// (relay key as its token) -> Relay's Messages API -> InvokeModelWithResponseStream, passed
// through; turn 1 asks for the Write tool, turn 2 (with the result) answers. Codex: `codex exec`
// -> Relay's Responses API -> translated to ConverseStream; turn 1 calls apply_patch.
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { FINAL_TEXT, HELLO_PATCH } from '../support/agent-turns.ts';
import { claudeBinary, cliEnv, codexBinary, jsonLines, runCli } from '../support/agent-cli.ts';
import { codexHome } from '../support/codex-home.ts';
import { converseAnswer, invokeChunk, startFakeBedrock, type BedrockRequest, type StreamMessage } from '../support/fake-bedrock.ts';
import { anthropic, parseSse } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';

const CLI_TIMEOUT_MS = 90_000;
const KEY = { accessKeyId: 'AKIAAGENTSBEDROCK1', secretAccessKey: 'agents/Secret+Key0123456789abcdefghijklm' };
const REGION = 'eu-central-1';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }, { use: 'vendor-bedrock' }] });
const bedrock = await startFakeBedrock({ keys: [KEY], region: REGION });
t.teardown(async () => {
  await relay.close();
  await bedrock.close();
});

const seeded = await seedRoute(relay, {
  baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model: 'claude-bedrock', upstreamModel: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0',
  hostKeys: [`${KEY.accessKeyId}:${KEY.secretAccessKey}`], hostOptions: { region: REGION, endpoint: bedrock.url },
});
await routeLive(relay, seeded);
const codexRoute = await seedRoute(relay, {
  baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model: 'codex-bedrock', upstreamModel: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0',
  hostKeys: [`${KEY.accessKeyId}:${KEY.secretAccessKey}`], hostOptions: { region: REGION, endpoint: bedrock.url }, model_spec: { reasoning: true, reasoningLevels: ['low', 'high'] },
});
await routeLive(relay, codexRoute);

const hasToolResult = (req: BedrockRequest): boolean => (req.body.messages as Array<{ content?: unknown }>)
  .some((m) => Array.isArray(m.content) && m.content.some((b: { type?: string }) => b?.type === 'tool_result'));

/** Anthropic's stream for a turn, as Bedrock's chunks. */
const asChunks = (frames: string[]) => frames.flatMap((f) => parseSse(f)).map((f) => invokeChunk(JSON.parse(f.data)));

t.test('claude -p -> Relay -> Bedrock (InvokeModel): a turn with a Write tool call', async (t) => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-home-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-work-'));
  t.teardown(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const file = path.join(work, 'hello.txt');
  bedrock.script((req) => {
    if (req.operation !== 'invoke-with-response-stream') return undefined;
    const frames = hasToolResult(req)
      ? anthropic.events({ model: req.modelId, text: FINAL_TEXT, chunks: 3 })
      : anthropic.events({ model: req.modelId, toolCall: { name: 'Write', input: { file_path: file, content: 'hello\n' } }, chunks: 4 });
    return { kind: 'events', messages: asChunks(frames), chunkBytes: 97 };
  });

  const env = cliEnv({
    HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: `${relay.inferenceUrl}/vendor-b`, ANTHROPIC_AUTH_TOKEN: seeded.relayKey,
    ANTHROPIC_MODEL: 'claude-bedrock', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-bedrock',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_MAX_RETRIES: '0',
  });
  const before = bedrock.requests.length;
  const run = await runCli(claudeBinary(), ['-p', 'Create hello.txt containing hello.', '--output-format', 'json', '--permission-mode', 'acceptEdits'], { cwd: work, env, timeoutMs: CLI_TIMEOUT_MS });
  t.notOk(run.timedOut, `claude finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `claude exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const result = JSON.parse(run.stdout) as { is_error: boolean; result: string };
  t.equal(result.is_error, false);
  t.equal(result.result, FINAL_TEXT);
  t.ok(existsSync(file), 'the Write tool created the file');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');

  const calls = bedrock.requests.slice(before).filter((r) => r.operation === 'invoke-with-response-stream');
  t.ok(calls.length >= 2, 'the tool call and the final turn reached Bedrock');
  t.ok(calls.some(hasToolResult), 'the tool result went back to Bedrock');
  for (const r of calls) {
    t.equal(r.principal, KEY.accessKeyId, 'signed with the host key');
    t.equal(r.body.anthropic_version, 'bedrock-2023-05-31');
    t.notOk('model' in r.body || 'stream' in r.body, 'no model or stream field');
    t.notOk(JSON.stringify(r.headers).includes(seeded.relayKey), 'the relay key never reaches AWS');
  }
});

const converseHasToolResult = (req: BedrockRequest): boolean => (req.body.messages as Array<{ content: Array<Record<string, unknown>> }>)
  .some((m) => m.content.some((b) => b.toolResult !== undefined));

/** ConverseStream of an apply_patch call, its input streamed in pieces. */
function applyPatchEvents(): StreamMessage[] {
  const input = JSON.stringify({ input: HELLO_PATCH });
  const pieces = [input.slice(0, 10), input.slice(10, 40), input.slice(40)];
  return [
    { event: 'messageStart', payload: { role: 'assistant' } },
    { event: 'contentBlockStart', payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_relay_e2e', name: 'apply_patch' } } } },
    ...pieces.map((p): StreamMessage => ({ event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input: p } } } })),
    { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { event: 'messageStop', payload: { stopReason: 'tool_use' } },
    { event: 'metadata', payload: { usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 }, metrics: { latencyMs: 9 } } },
  ];
}

t.test('codex exec -> Relay -> Bedrock (ConverseStream, translated): apply_patch round trip', async (t) => {
  const doc = await fetch(`${relay.inferenceUrl}/agent-a/v1/models?client_version=0.169.0`, { headers: { authorization: `Bearer ${codexRoute.relayKey}` } });
  const home = codexHome({ baseUrl: `${relay.inferenceUrl}/agent-a/v1`, model: 'codex-bedrock', modelsJson: await doc.text() });
  t.teardown(home.cleanup);
  bedrock.script((req) => {
    if (req.operation !== 'converse-stream') return undefined;
    return { kind: 'events', messages: converseHasToolResult(req) ? converseAnswer(FINAL_TEXT).events : applyPatchEvents(), chunkBytes: 61 };
  });
  const before = bedrock.requests.length;
  const run = await runCli(codexBinary(), ['exec', '--skip-git-repo-check', '--json', '-C', home.work, 'Create hello.txt containing hello.'], {
    cwd: home.work, env: cliEnv({ HOME: home.dir, CODEX_HOME: home.dir, RELAY_KEY: codexRoute.relayKey }), timeoutMs: CLI_TIMEOUT_MS,
  });
  t.notOk(run.timedOut, `codex finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `codex exec exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const events = jsonLines(run.stdout);
  const file = path.join(home.work, 'hello.txt');
  t.ok(existsSync(file), 'apply_patch created the file');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');
  t.ok(events.some((e) => e.type === 'item.completed' && e.item?.type === 'agent_message' && e.item.text === FINAL_TEXT), 'the final message');

  const calls = bedrock.requests.slice(before).filter((r) => r.operation === 'converse-stream');
  t.ok(calls.length >= 2, 'the tool call and the final turn reached Bedrock');
  const first = calls[0]!;
  t.equal(first.principal, KEY.accessKeyId);
  const tools = (first.body.toolConfig as { tools: Array<{ toolSpec: { name: string; inputSchema: { json: { required?: string[] } } } }> }).tools;
  t.same(tools.find((x) => x.toolSpec.name === 'apply_patch')?.toolSpec.inputSchema.json.required, ['input'], 'apply_patch as a tool with one string parameter');
  t.ok(calls.some(converseHasToolResult), 'the tool output went back as a toolResult');
});
