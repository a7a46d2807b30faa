// Errors an operator causes and can fix (a bad argument, a short password, an unreachable
// database, a port in use) print one line without a stack; anything else is a bug and keeps it.
import { RelayError, StartupError } from '../errors.ts';

/** Network failures worth one line: the address says where, the code what. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

interface SystemError extends Error {
  code?: string;
  syscall?: string;
  address?: string;
  port?: number;
  errors?: unknown[];
}

/** Node's connect errors to several addresses (localhost: ::1 and 127.0.0.1) are an AggregateError with an empty message. */
function firstOf(err: SystemError): SystemError {
  return err instanceof AggregateError && err.errors.length > 0 ? (err.errors[0] as SystemError) : err;
}

/** The one line to print for an expected error, or null when it is unexpected (print the stack). */
export function expectedErrorLine(err: unknown): string | null {
  if (err instanceof StartupError) return err.message;
  if (err instanceof RelayError) return err.message;
  if (!(err instanceof Error)) return null;
  const e = err as SystemError;
  if (e.code?.startsWith('ERR_PARSE_ARGS_')) return `${e.message} (relay --help lists the commands and options)`;
  const sys = firstOf(e);
  if (sys.code && CONNECT_CODES.has(sys.code)) {
    const where = sys.address ? ` ${sys.address}${sys.port ? `:${sys.port}` : ''}` : '';
    return `cannot connect to${where || ' a server'} (${sys.code}); is the database (DATABASE_URL) or the server named there running?`;
  }
  if (sys.syscall === 'listen' && (sys.code === 'EADDRINUSE' || sys.code === 'EACCES' || sys.code === 'EADDRNOTAVAIL')) {
    return `cannot listen on ${sys.address ?? ''}:${sys.port ?? ''} (${sys.code}): set RELAY_PORT / RELAY_CONTROL_PORT or the config's server ports, or stop what uses it`;
  }
  // pg's own connect timeout (connectionTimeoutMillis) has no code.
  if (/^Connection terminated due to connection timeout$/.test(sys.message)) return `database: ${sys.message}; is DATABASE_URL's server reachable?`;
  // A PostgreSQL error (28P01 wrong password, 3D000 no such database, ...): its message names no secret.
  if (typeof sys.code === 'string' && /^[0-9A-Z]{5}$/.test(sys.code) && 'severity' in sys) return `database: ${sys.message} (${sys.code})`;
  return null;
}
