// The real Claude Code, in print mode, asked through Relay to create a file with its Write tool:
// the upstream script that answers it (a tool call, then the final text once the tool's result
// comes back) and the run with the checks every such test makes.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { openai, type ScriptFn } from './fake-upstream.ts';
import { FINAL_TEXT } from './agent-turns.ts';
import { claudeBinary, cliEnv, runCli } from './agent-cli.ts';

const CLI_TIMEOUT_MS = 60_000;
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };

/** A Chat Completions model: a Write tool call until the request carries its result, then FINAL_TEXT. */
export function chatWriteScript(file: string): ScriptFn {
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

/**
 * Runs `claude -p` against Relay's Anthropic endpoint with `model` and `relayKey`, after `prepare`
 * got the path of the file it should write (to script the upstream), and checks that it finished
 * with FINAL_TEXT and wrote the file.
 */
export async function claudeWriteRound(t: Test, o: { inferenceUrl: string; relayKey: string; model: string; prepare: (file: string) => void }): Promise<void> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-home-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'relay-claude-work-'));
  t.teardown(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const file = path.join(work, 'hello.txt');
  o.prepare(file);
  const env = cliEnv({
    HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: `${o.inferenceUrl}/vendor-b`, ANTHROPIC_API_KEY: o.relayKey,
    ANTHROPIC_MODEL: o.model, ANTHROPIC_DEFAULT_HAIKU_MODEL: o.model,
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
}
