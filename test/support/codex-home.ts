// A throwaway CODEX_HOME whose config.toml is examples/codex/config.toml itself, with this run's
// model, paths, base URL and key variable put in (and fewer retries, so failing tests end
// sooner): the end-to-end tests run Codex exactly as a user who copied the example would.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  writeFileSync(path.join(dir, 'config.toml'), exampleConfig({ ...o, catalog, prompt }));
  return {
    dir, work,
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    },
  };
}

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/codex/config.toml');

/** The example's text with `key = value` lines replaced (each key must be in the example). */
function exampleConfig(o: { baseUrl: string; model: string; envKey?: string; catalog: string; prompt: string }): string {
  let text = readFileSync(EXAMPLE, 'utf8');
  const set = (key: string, value: string) => {
    const line = new RegExp(`^${key} = .*$`, 'm');
    if (!line.test(text)) throw new Error(`examples/codex/config.toml has no ${key} line`);
    text = text.replace(line, `${key} = ${JSON.stringify(value)}`);
  };
  set('model', o.model);
  set('model_catalog_json', o.catalog);
  set('model_instructions_file', o.prompt);
  set('base_url', o.baseUrl);
  set('env_key', o.envKey ?? 'RELAY_KEY');
  return `${text.trimEnd()}\nstream_max_retries = 2\nrequest_max_retries = 1\n`;
}
