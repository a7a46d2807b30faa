// A throwaway CODEX_HOME configured the way examples/codex/config.toml is: a `relay` provider on
// 127.0.0.1, the models document from Relay as model_catalog_json, a prompt file, analytics off,
// no unbounded retries, no approvals.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface CodexHome {
  dir: string;
  work: string;
  cleanup(): void;
}

export function codexHome(o: { baseUrl: string; model: string; modelsJson: string; envKey?: string }): CodexHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-codex-home-'));
  const work = mkdtempSync(path.join(os.tmpdir(), 'relay-codex-work-'));
  const catalog = path.join(dir, 'models.json');
  const prompt = path.join(dir, 'prompt.md');
  writeFileSync(catalog, o.modelsJson);
  writeFileSync(prompt, 'You are a coding agent. Edit files with the apply_patch tool.\n');
  writeFileSync(path.join(dir, 'config.toml'), [
    `model = ${JSON.stringify(o.model)}`,
    'model_provider = "relay"',
    `model_catalog_json = ${JSON.stringify(catalog)}`,
    `model_instructions_file = ${JSON.stringify(prompt)}`,
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'unbounded_connection_retries = false',
    '',
    '[model_providers.relay]',
    'name = "relay"',
    `base_url = ${JSON.stringify(o.baseUrl)}`,
    'wire_api = "responses"',
    `env_key = ${JSON.stringify(o.envKey ?? 'RELAY_KEY')}`,
    'stream_max_retries = 2',
    'request_max_retries = 1',
    '',
  ].join('\n'));
  return {
    dir, work,
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    },
  };
}
