// The ClickHouse client from the plugin's options. The password comes from an environment
// variable named in the options, never from the config file itself.
import { createClient, type ClickHouseClient } from '@clickhouse/client';

export interface ClickHouseConnectionOptions {
  url: string;
  username?: string;
  passwordEnv?: string;
  database: string;
  /** Run ClickHouse in-process through chdb instead of a server (single instance only). */
  embedded?: { path: string };
}

/** An in-process ClickHouse engine (the `chdb` package) behind the same client API. */
async function embeddedClient(dataPath: string): Promise<ClickHouseClient> {
  let createChdbConnection: (o: { path: string }) => unknown;
  try {
    ({ createChdbConnection } = (await import('chdb/connection')) as { createChdbConnection: (o: { path: string }) => unknown });
  } catch {
    throw new Error('log-clickhouse: options.embedded needs the chdb package (npm install chdb)');
  }
  const connection = createChdbConnection({ path: dataPath });
  return createClient({ connection, clickhouse_settings: { date_time_input_format: 'best_effort' } } as Parameters<typeof createClient>[0]);
}

export async function openClickHouse(options: ClickHouseConnectionOptions): Promise<ClickHouseClient> {
  return options.embedded ? embeddedClient(options.embedded.path) : clickHouseClient(options);
}

export function clickHouseClient(options: ClickHouseConnectionOptions): ClickHouseClient {
  const password = options.passwordEnv ? process.env[options.passwordEnv] : undefined;
  if (options.passwordEnv && password === undefined) {
    throw new Error(`log-clickhouse: environment variable ${options.passwordEnv} (passwordEnv) is not set`);
  }
  return createClient({
    url: options.url,
    username: options.username,
    password,
    database: options.database,
    request_timeout: 30_000,
    clickhouse_settings: { date_time_input_format: 'best_effort' },
  });
}
