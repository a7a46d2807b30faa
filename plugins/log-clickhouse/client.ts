// The ClickHouse client from the plugin's options. The password comes from an environment
// variable named in the options, never from the config file itself.
import { createClient, type ClickHouseClient } from '@clickhouse/client';

export interface ClickHouseConnectionOptions {
  url: string;
  username?: string;
  passwordEnv?: string;
  database: string;
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
