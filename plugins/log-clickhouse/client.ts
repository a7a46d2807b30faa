// The ClickHouse client from the plugin's options. The password comes from an environment
// variable named in the options, never from the config file itself. The client logs to the
// plugin's pino logger (clickHouseClientLog), not to the console.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import { StartupError } from '../../core/plugin-api.ts';
import { clickHouseClientLog } from '../../core/plugin-api/log-backends.ts';

export interface ClickHouseConnectionOptions {
  url: string;
  username?: string;
  passwordEnv?: string;
  database: string;
  /** Run ClickHouse in-process through chdb instead of a server (single instance only). */
  embedded?: { path: string };
}

/** What an operator runs to get the optional engine (not among Relay's dependencies: ~540 MB). */
export const CHDB_INSTALL_HINT = 'log-clickhouse: options.embedded runs ClickHouse in-process through the chdb package, which Relay does not install '
  + '(about 540 MB): run `npm install chdb@3.4` in Relay\'s directory, or set options.url to a ClickHouse server instead';

// A name in a variable: the type check must not look for a package that is usually absent.
const CHDB_CONNECTION_MODULE = 'chdb/connection';

/** An in-process ClickHouse engine (the `chdb` package) behind the same client API. */
async function embeddedClient(dataPath: string, log: Logger): Promise<ClickHouseClient> {
  let createChdbConnection: (o: { path: string }) => unknown;
  try {
    // Loaded only here, on first use of embedded mode: nothing else in Relay needs it.
    ({ createChdbConnection } = (await import(CHDB_CONNECTION_MODULE)) as { createChdbConnection: (o: { path: string }) => unknown });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new Error(CHDB_INSTALL_HINT);
  }
  const connection = createChdbConnection({ path: dataPath });
  return createClient({ connection, clickhouse_settings: { date_time_input_format: 'best_effort' }, log: clickHouseClientLog(log) } as Parameters<typeof createClient>[0]);
}

export async function openClickHouse(options: ClickHouseConnectionOptions, log: Logger): Promise<ClickHouseClient> {
  return options.embedded ? embeddedClient(options.embedded.path, log) : clickHouseClient(options, log);
}

export function clickHouseClient(options: ClickHouseConnectionOptions, log: Logger): ClickHouseClient {
  const password = options.passwordEnv ? process.env[options.passwordEnv] : undefined;
  if (options.passwordEnv && password === undefined) {
    throw new StartupError(`log-clickhouse: environment variable ${options.passwordEnv} (passwordEnv) is not set`);
  }
  return createClient({
    url: options.url,
    username: options.username,
    password,
    database: options.database,
    request_timeout: 30_000,
    clickhouse_settings: { date_time_input_format: 'best_effort' },
    log: clickHouseClientLog(log),
  });
}
