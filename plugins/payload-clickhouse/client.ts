// The ClickHouse client from the plugin's options; the password comes from a named environment variable.
// The client logs to the plugin's pino logger (clickHouseClientLog), not to the console.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import { StartupError } from '../../core/plugin-api.ts';
import { clickHouseClientLog } from '../../core/plugin-api/log-backends.ts';

export interface ClickHouseConnectionOptions {
  url: string;
  username?: string;
  passwordEnv?: string;
  database: string;
}

export function clickHouseClient(options: ClickHouseConnectionOptions, log: Logger): ClickHouseClient {
  const password = options.passwordEnv ? process.env[options.passwordEnv] : undefined;
  if (options.passwordEnv && password === undefined) {
    throw new StartupError(`payload-clickhouse: environment variable ${options.passwordEnv} (passwordEnv) is not set`);
  }
  return createClient({ url: options.url, username: options.username, password, database: options.database, request_timeout: 30_000, log: clickHouseClientLog(log) });
}
