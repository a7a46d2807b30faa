// Subcommands of the `relay` command.
import { loadConfigFile } from '../config/load.ts';
import { StartupError } from '../errors.ts';
import { openDatabase } from '../db/open.ts';
import { migrate } from '../db/migrate.ts';
import { Sealer, generateMasterKey, parseMasterKey } from '../crypto/sealing.ts';
import { resealHostKeys } from '../crypto/rekey.ts';
import { sealStoredWebhookUrls } from '../budgets/webhook-sealing.ts';
import { sealStoredHostHeaders } from '../catalog/host-header-sealing.ts';
import { configValuesSealedUnder } from '../crypto/config-sealed.ts';
import { loadPlugins } from '../plugins/loader.ts';
import { backendSelectionProblems, declaredBackends, selectedBackend } from '../observer/backend-selection.ts';
import { adminUserSet } from './admin-user.ts';
import { startService } from './start.ts';
import { runPrices } from './prices.ts';
import { runCatalog } from './catalog.ts';

export const USAGE = `Usage: relay [command] [--config <file>]
       relay --version | --help

Commands:
  start                     start Relay (the default)
  migrate                   apply database migrations and exit
  check [file]              validate the config file (the one given, else as below) and print
                            the selected backends and the resolved plugin tree
  master-key generate       print a new RELAY_MASTER_KEY (32 random bytes, base64)
  master-key rotate         re-encrypt stored host-key values sealed under
                            RELAY_MASTER_KEY_PREVIOUS with RELAY_MASTER_KEY, name the config
                            file's values still sealed under the previous key, and exit
  master-key seal           read one value on stdin and print it sealed under RELAY_MASTER_KEY,
                            for the config file (payload-s3 credentials); a value sealed under
                            RELAY_MASTER_KEY_PREVIOUS is printed re-sealed under the current key
  admin-user set --username <u> [--role admin|viewer] [--url <control url>]
                            add a dashboard user (admin unless --role), or reset its password;
                            the password is read on stdin, never argv. Against a running Relay
                            on the embedded database (or --url) it goes through its admin API
                            with RELAY_ADMIN_TOKEN, or is refused
  catalog export [--url <control url>]
                            print the catalog (providers, hosts, models, rate limits, policies,
                            host keys, pricings, budgets) as a YAML catalog file: references by
                            slug, host keys by environment variable or sealed value
  catalog apply -f <file> [--dry-run] [--prune] [--url <control url>]
                            make the catalog match the file, by slug, in one transaction, and
                            print the changes; --prune deletes what the file lacks. Both work on
                            the config's database, or through a running Relay's admin API
                            (--url, or the embedded database's running instance) with
                            RELAY_ADMIN_TOKEN
  prices [<model>] [--json] print the shipped price table (USD per million tokens, each entry's
                            source and the date it was read); with a name, the entry an upstream
                            model name (a dated snapshot, a Bedrock or Vertex id) resolves to

The config file is config/relay.yaml unless --config or RELAY_CONFIG says otherwise.
`;

export interface CommandOptions {
  configFile: string;
  /** --config as given (undefined when the file came from RELAY_CONFIG or the default). */
  configFlag?: string;
  username?: string;
  password?: string;
  json?: boolean;
  role?: string;
  url?: string;
  /** -f: the catalog file of relay catalog apply. */
  file?: string;
  dryRun?: boolean;
  prune?: boolean;
}

/** Runs a command; returns the exit code, or null for a long-running service. */
export async function runCommand(args: string[], options: CommandOptions): Promise<number | null> {
  const [command = 'start', sub] = args;
  /** Refuses arguments past the `count` this command takes after its name. */
  const takes = (count: number): void => {
    const extra = args.slice(1 + count)[0];
    if (extra !== undefined) throw new StartupError(`relay ${command}: unexpected argument ${JSON.stringify(extra)}\n${USAGE}`);
  };
  switch (command) {
    case 'start':
      takes(0);
      await startService(options.configFile);
      return null;
    case 'migrate': {
      takes(0);
      const { config } = loadConfigFile(options.configFile);
      const db = await openDatabase({ url: config.database.url, dataDir: config.dataDir, queryTimeoutMs: config.database.queryTimeoutMs });
      try {
        const applied = await migrate(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'check': {
      takes(1);
      if (sub !== undefined && options.configFlag !== undefined && sub !== options.configFlag) {
        throw new StartupError(`relay check: two config files given (${JSON.stringify(sub)} and --config ${JSON.stringify(options.configFlag)}); give one`);
      }
      const loaded = loadConfigFile(sub ?? options.configFile);
      const plugins = await loadPlugins(loaded.config.plugins, loaded.baseDir, loaded.file ?? options.configFile);
      const declared = declaredBackends(plugins);
      const problems = backendSelectionProblems(loaded.config, declared).map((p) => `${loaded.file}: ${p}`);
      // A backend plugin that declares no backends() may provide the selected one: start-up will tell.
      if (problems.length > 0 && declared.undeclared.length === 0) throw new StartupError(problems.join('\n'));
      process.stdout.write(`${loaded.file}: OK\n`);
      for (const p of problems) process.stdout.write(`note: ${p} (unless ${declared.undeclared.join(', ')} provides it: start-up checks)\n`);
      process.stdout.write(`usage backend: ${selectedBackend(loaded.config, 'usage')}\npayload backend: ${selectedBackend(loaded.config, 'payload')}\n`);
      process.stdout.write('plugins (in load order):\n');
      for (const p of plugins) {
        const deps = p.plugin.dependencies?.length ? ` (after ${p.plugin.dependencies.join(', ')})` : '';
        process.stdout.write(`  ${p.plugin.name} [${p.plugin.kind}] from ${p.source}${deps}\n`);
        for (const [k, v] of Object.entries(p.options)) process.stdout.write(`    ${k}: ${JSON.stringify(v)}\n`);
      }
      return 0;
    }
    case 'master-key':
      takes(1);
      if (sub === 'generate') {
        process.stdout.write(`${generateMasterKey()}\n`);
        return 0;
      }
      if (sub === 'rotate') return rotateMasterKey(options.configFile, process.env);
      if (sub === 'seal') return sealFromStdin(process.env);
      throw new StartupError('usage: relay master-key generate | relay master-key rotate | relay master-key seal');
    case 'admin-user': {
      takes(1);
      if (sub !== 'set') throw new StartupError('usage: printf %s "$PASSWORD" | relay admin-user set --username <u> [--role admin|viewer] [--url <control url>]');
      return adminUserSet(options);
    }
    case 'catalog':
      takes(1);
      return runCatalog(sub, { configFile: options.configFile, url: options.url, file: options.file, dryRun: options.dryRun, prune: options.prune },
        (text) => process.stdout.write(text));
    case 'prices':
      return runPrices(sub, options.json === true, (text) => process.stdout.write(text));
    default:
      throw new StartupError(`unknown command "${command}"\n${USAGE}`);
  }
}

/** `relay master-key rotate`: the start-up re-sealing, offline. Prints counts, never values. */
async function rotateMasterKey(configFile: string, env: Record<string, string | undefined>): Promise<number> {
  if (!env.RELAY_MASTER_KEY || !env.RELAY_MASTER_KEY_PREVIOUS) {
    throw new StartupError('relay master-key rotate needs RELAY_MASTER_KEY (the new key) and RELAY_MASTER_KEY_PREVIOUS (the old one)');
  }
  const sealer = new Sealer(parseMasterKey(env.RELAY_MASTER_KEY), parseMasterKey(env.RELAY_MASTER_KEY_PREVIOUS, 'RELAY_MASTER_KEY_PREVIOUS'));
  const { config } = loadConfigFile(configFile, env);
  const db = await openDatabase({ url: config.database.url, dataDir: config.dataDir, queryTimeoutMs: config.database.queryTimeoutMs });
  try {
    await migrate(db);
    const result = await resealHostKeys(db, sealer);
    process.stdout.write(`re-encrypted ${result.resealed} host-key value(s) under master key ${sealer.currentKeyId}; `
      + `${result.current} already current; ${result.unknownKey} under an unknown key\n`);
    const webhooks = await sealStoredWebhookUrls(db, sealer);
    process.stdout.write(`sealed the alert webhook URLs of ${webhooks.sealed} budget(s); ${webhooks.unknownKey} with a URL under an unknown key\n`);
    const headers = await sealStoredHostHeaders(db, sealer);
    process.stdout.write(`sealed the header values of ${headers.sealed} host(s); ${headers.unknownKey} with a value under an unknown key\n`);
    const inConfig = configValuesSealedUnder(config, sealer.previousKeyId!);
    for (const pointer of inConfig) {
      process.stdout.write(`config ${pointer}: sealed under the previous key; re-seal it with relay master-key seal before removing RELAY_MASTER_KEY_PREVIOUS\n`);
    }
    return result.unknownKey > 0 || webhooks.unknownKey > 0 || headers.unknownKey > 0 || inConfig.length > 0 ? 2 : 0;
  } finally {
    await db.close();
  }
}

/**
 * `relay master-key seal`: one value from stdin (a trailing newline dropped), sealed under
 * RELAY_MASTER_KEY. Read from stdin, not argv, so the secret stays out of process lists and shell
 * history. A value already sealed (under the current or previous key) is opened and re-sealed.
 */
async function sealFromStdin(env: Record<string, string | undefined>): Promise<number> {
  if (!env.RELAY_MASTER_KEY) throw new StartupError('relay master-key seal needs RELAY_MASTER_KEY (the key to seal under)');
  const sealer = new Sealer(parseMasterKey(env.RELAY_MASTER_KEY),
    env.RELAY_MASTER_KEY_PREVIOUS ? parseMasterKey(env.RELAY_MASTER_KEY_PREVIOUS, 'RELAY_MASTER_KEY_PREVIOUS') : null);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const value = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (value === '') throw new StartupError('relay master-key seal: no value on stdin (e.g. printf %s "$SECRET" | relay master-key seal)');
  const keyId = Sealer.keyIdOf(value);
  if (keyId === null) {
    process.stdout.write(`${sealer.seal(value)}\n`);
    return 0;
  }
  if (keyId !== sealer.currentKeyId && keyId !== sealer.previousKeyId) {
    throw new StartupError(`relay master-key seal: the value on stdin is sealed under master key ${keyId}; set that key as RELAY_MASTER_KEY_PREVIOUS to re-seal it`);
  }
  let plaintext: string;
  try {
    plaintext = sealer.open(value);
  } catch {
    throw new StartupError(`relay master-key seal: the value on stdin names master key ${keyId} but does not open with it (damaged or cut)`);
  }
  process.stdout.write(`${sealer.seal(plaintext)}\n`);
  return 0;
}
