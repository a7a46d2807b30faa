// The ClickHouse client from the plugin's options; the password comes from a named environment variable.
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
    throw new Error(`payload-clickhouse: environment variable ${options.passwordEnv} (passwordEnv) is not set`);
  }
  return createClient({ url: options.url, username: options.username, password, database: options.database, request_timeout: 30_000 });
}
