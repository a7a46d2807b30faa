// The `log` option of a @clickhouse/client client, writing to a pino logger: by default the client
// prints to the console (outside pino, unstructured), among others an ERROR with a stack each time
// a request is aborted through its abort_signal, which the ClickHouse backends do at a write's
// deadline and on close. Those aborts are Relay's own and go to debug; the client's other errors
// and warnings keep their level, with its message, its context (operation, query id: no
// credentials) and the error.
// Types only: this module is public (relay-gateway/log-backends) and must not load the client.
import type { ClickHouseLogLevel, ErrorLogParams, Logger as ClickHouseLogger, LogParams, WarnLogParams } from '@clickhouse/client';
import type { Logger } from 'pino';

/** The client's message for a request its abort_signal ended (socket_pool.ts onAbort, 1.x). */
export const CLICKHOUSE_ABORT_MESSAGE = 'The user aborted a request.';

// ClickHouseLogLevel's values, written out so that nothing of the client is loaded here.
const TRACE: ClickHouseLogLevel = 0;
const DEBUG: ClickHouseLogLevel = 1;
const WARN: ClickHouseLogLevel = 3;
const ERROR: ClickHouseLogLevel = 4;
const OFF: ClickHouseLogLevel = 127;

/** The client's level from the logger's: the client does not build what pino would drop. */
function clientLevel(log: Logger): ClickHouseLogLevel {
  if (log.isLevelEnabled('trace')) return TRACE;
  if (log.isLevelEnabled('debug')) return DEBUG;
  if (log.isLevelEnabled('warn')) return WARN; // the client's one info line ("Log level is set to") goes to debug
  if (log.isLevelEnabled('error')) return ERROR;
  return OFF;
}

function fields({ module, args }: LogParams, err?: Error): Record<string, unknown> {
  return { clickhouse: { module, ...args }, ...(err ? { err } : {}) };
}

/** `createClient({ log: clickHouseClientLog(log) })`: the client's own lines in `log`. */
export function clickHouseClientLog(log: Logger): { LoggerClass: new () => ClickHouseLogger; level: ClickHouseLogLevel } {
  // The client constructs the class itself (no arguments): one class per client, closing over its logger.
  class PinoClickHouseLogger implements ClickHouseLogger {
    trace(p: LogParams): void { log.trace(fields(p), p.message); }
    debug(p: LogParams): void { log.debug(fields(p), p.message); }
    info(p: LogParams): void { log.debug(fields(p), p.message); }
    warn(p: WarnLogParams): void { log.warn(fields(p, p.err), p.message); }
    error(p: ErrorLogParams): void {
      if (p.err?.message === CLICKHOUSE_ABORT_MESSAGE) log.debug(fields(p), `${p.message} (aborted by Relay)`);
      else log.error(fields(p, p.err), p.message);
    }
  }
  return { LoggerClass: PinoClickHouseLogger, level: clientLevel(log) };
}
