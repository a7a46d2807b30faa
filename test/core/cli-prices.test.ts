// `relay prices` as an operator runs it: the whole table with each entry's source and date, JSON
// for scripts, and the entry an upstream model name resolves to (exit 1 when none).
import t from 'tap';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRICE_TABLE } from '../../core/pricing/table.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function relay(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, 'bin/relay.js'), ...args], { cwd: root, env: { ...process.env, RELAY_FROM_SOURCE: '1' } }, (error, out, err) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, out, err });
    });
  });
}

t.test('relay prices lists every entry with its rates, source and the date read', async (t) => {
  const { code, out } = await relay(['prices']);
  t.equal(code, 0);
  const lines = out.split('\n');
  for (const entry of PRICE_TABLE) {
    const line = lines.find((l) => l.split(/\s{2,}/)[0].split(', ')[0] === entry.model);
    t.ok(line, `${entry.model} is listed`);
    t.match(line, entry.source);
    t.match(line, entry.readOn);
  }
  t.match(out, /claude-sonnet-4-5\s+3\s+0\.3\s+3\.75\s+6\s+15\s+10\s+>200000: 6 in \/ 22\.5 out/, 'rates, searches and the long-context tier');
  t.match(out, /gpt-5\s+1\.25\s+0\.125\s+-\s+-\s+10\s+10\s+-\s+flex 0\.5x, priority 2x\s/, 'an OpenAI reasoning model\'s search rate, and its service tiers');
  t.match(out, /gpt-4\.1\s+2\s+0\.5\s+-\s+-\s+8\s+-\s+-/, 'gpt-4.1\'s search rate depends on the tool\'s version: unpriced');
  t.match(out, /gpt-4o-mini\s.*\s+priority 1\.667x\s/, 'a multiple shown to four figures');
  t.match(out, /api-priority-processing/, 'where the priority rates were read');
  t.match(out, /web-search-tool/, 'where the search rate was read');
  t.match(out, /claude-opus-4-6\s.*\s+us_inference 1\.1x, fast 6x\s/, 'fast mode and US-only inference');
  t.match(out, /fast-mode/, 'where the modifiers were read');
});

t.test('relay prices --json is the table for a script', async (t) => {
  const { code, out } = await relay(['prices', '--json']);
  t.equal(code, 0);
  const doc = JSON.parse(out);
  t.equal(doc.currency, 'USD');
  t.same(doc.models, JSON.parse(JSON.stringify(PRICE_TABLE)));
});

t.test('relay prices <name> resolves a snapshot or a reseller\'s id; an unknown name exits 1', async (t) => {
  const bedrock = await relay(['prices', 'us.anthropic.claude-haiku-4-5-20251001-v1:0', '--json']);
  t.equal(bedrock.code, 0);
  t.match(JSON.parse(bedrock.out), { model: 'claude-haiku-4-5', rates: { inputPerMillion: 1, cacheWrite1hPerMillion: 2 } });
  const unknown = await relay(['prices', 'local-llama']);
  t.equal(unknown.code, 1);
  t.match(unknown.out, /"local-llama" is not in the price table/);
});
