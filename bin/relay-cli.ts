// The `relay` command: start the service and the operator's chores.
// First, before the rest of Relay loads: see core/server/tick-object-maps.ts.
import '../core/server/tick-object-maps.ts';
import { parseArgs } from 'node:util';
import { StartupError } from '../core/errors.ts';
import { runCommand, USAGE } from '../core/cli/commands.ts';

async function main(): Promise<number | null> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      username: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const configFile = values.config ?? process.env.RELAY_CONFIG ?? 'config/relay.yaml';
  return runCommand(positionals, { configFile, username: values.username, password: values.password, json: values.json });
}

main().then((code) => {
  if (code !== null) process.exitCode = code;
}, (err: unknown) => {
  if (err instanceof StartupError || (err as { code?: string })?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`relay: ${(err as Error).message}\n`);
  } else {
    process.stderr.write(`relay: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  process.exitCode = 1;
});
