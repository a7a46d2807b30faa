// The `relay` command: start the service and the operator's chores.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { expectedErrorLine } from '../core/cli/expected-errors.ts';
import { runCommand, USAGE } from '../core/cli/commands.ts';
import { PACKAGE_ROOT } from '../core/package-root.ts';

// `relay check | head`: the reader went away; what is left to print has no one to read it.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

async function main(): Promise<number | null> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      username: { type: 'string' },
      // Accepted only to be refused with a clear message: passwords come on stdin.
      password: { type: 'string' },
      json: { type: 'boolean' },
      role: { type: 'string' },
      url: { type: 'string' },
      file: { type: 'string', short: 'f' },
      'dry-run': { type: 'boolean' },
      prune: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version) {
    const pkg = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  // An empty RELAY_CONFIG counts as unset, as for every other variable.
  const configFile = values.config ?? (process.env.RELAY_CONFIG || 'config/relay.yaml');
  return runCommand(positionals, { configFile, configFlag: values.config, username: values.username, password: values.password, role: values.role, url: values.url, json: values.json,
    file: values.file, dryRun: values['dry-run'], prune: values.prune });
}

main().then((code) => {
  if (code !== null) process.exitCode = code;
}, (err: unknown) => {
  const line = expectedErrorLine(err);
  process.stderr.write(line !== null ? `relay: ${line}\n` : `relay: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  // Exit now: a half-started service (a pool, a timer) must not keep the process alive.
  process.exit(1);
});
