// The real Codex CLI through Relay to an Azure OpenAI deployment (vendor-azure-openai), against
// the fake Azure resource and Entra ID token endpoint: Codex's Responses requests pass through
// to /openai/responses?api-version=... with an Entra bearer token, and the turn completes an
// apply_patch round trip (the model's answers come from a scripted fake behind the resource).
import t, { type Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { FINAL_TEXT, responsesApplyPatchScript } from '../support/agent-turns.ts';
import { cliEnv, codexBinary, jsonLines, runCli } from '../support/agent-cli.ts';
import { codexHome } from '../support/codex-home.ts';

const CLI_TIMEOUT_MS = 60_000;
const TENANT = 'contoso.onmicrosoft.com';
const CLIENT_ID = '11111111-2222-3333-4444-555555555555';
const CLIENT_SECRET = 'entra~secret~for~codex';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }, { use: 'vendor-azure-openai' }] });
const model = await startFakeUpstream();
model.script(responsesApplyPatchScript());
const azure = await startFakeAzure({
  deployments: { 'gpt-5-codex-prod': 'gpt-5-codex' }, entra: { tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }, backend: model.url,
});
t.teardown(async () => {
  await relay.close();
  await azure.close();
  await model.close();
});

const seeded = await seedRoute(relay, {
  baseUrl: azure.url, adapter: 'azure-openai', model: 'codex-azure', upstreamModel: 'gpt-5-codex-prod', hostKeys: [CLIENT_SECRET],
  hostOptions: { apiVersion: '2025-04-01-preview', entra: { tenantId: TENANT, clientId: CLIENT_ID, tokenUrl: `${azure.url}/${TENANT}/oauth2/v2.0/token` } },
});
await eventually(() => relay.relay.sync.snapshot().relayKeys.has(seeded.relayKeyId));
const AGENT = `${relay.inferenceUrl}/agent-a/v1`;

async function codexTurn(t: Test, o: { model: string; key: string }) {
  const doc = await fetch(`${AGENT}/models?client_version=0.169.0`, { headers: { authorization: `Bearer ${o.key}` } });
  const home = codexHome({ baseUrl: AGENT, model: o.model, modelsJson: await doc.text() });
  t.teardown(home.cleanup);
  const run = await runCli(codexBinary(), ['exec', '--skip-git-repo-check', '--json', '-C', home.work, 'Create hello.txt containing hello.'], {
    cwd: home.work, env: cliEnv({ HOME: home.dir, CODEX_HOME: home.dir, RELAY_KEY: o.key }), timeoutMs: CLI_TIMEOUT_MS,
  });
  t.notOk(run.timedOut, `codex finished within ${CLI_TIMEOUT_MS} ms (${run.ms} ms)`);
  t.equal(run.code, 0, `codex exec exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const events = jsonLines(run.stdout);
  const file = path.join(home.work, 'hello.txt');
  t.ok(existsSync(file), 'apply_patch created the file in the work directory');
  if (existsSync(file)) t.equal(readFileSync(file, 'utf8'), 'hello\n');
  t.ok(events.some((e) => e.type === 'item.completed' && e.item?.type === 'agent_message' && e.item.text === FINAL_TEXT), 'the final message');
  t.ok(events.some((e) => e.type === 'turn.completed'), 'the turn completed');
}

t.test('codex exec -> Relay -> Azure OpenAI deployment (Entra ID): apply_patch round trip', async (t) => {
  await codexTurn(t, { model: 'codex-azure', key: seeded.relayKey });
  const calls = azure.requests.filter((r) => r.path === '/openai/responses');
  t.ok(calls.length >= 2, 'two model calls reached the resource');
  for (const call of calls) {
    t.equal(call.query.get('api-version'), '2025-04-01-preview');
    t.match(call.headers.authorization, /^Bearer eyJ0eXAi\./, 'an Entra token, not the relay key');
    t.equal((JSON.parse(call.body) as { model: string }).model, 'gpt-5-codex-prod', 'the deployment is the model');
  }
  t.equal(azure.tokenRequests.length, 1, 'one token for the whole turn');
  const second = model.requests.at(-1)!;
  t.ok((second.json.input as Array<{ type: string }>).some((i) => i.type === 'custom_tool_call_output'), 'the tool output came back');
});
