// Maps anything thrown inside a route to a RelayError, so no user error becomes a 500.
import { RelayError, isRelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';

interface FastifyLikeError extends Error {
  code?: string;
  statusCode?: number;
  validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown> }>;
  validationContext?: string;
}

export function toRelayError(err: unknown): RelayError {
  if (isRelayError(err)) return err;
  const e = err as FastifyLikeError;
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RelayError('RELAY_ERR_BODY_TOO_LARGE', 'request body is larger than the configured limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE', 'unsupported content-type: send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new RelayError('RELAY_ERR_INVALID_JSON', 'request body is empty; expected a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new RelayError('RELAY_ERR_BAD_REQUEST', 'content-length does not match the body');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new RelayError('RELAY_ERR_INVALID_JSON', `request body is not valid JSON: ${e.message}`);
    default:
      break;
  }
  if (e?.validation && e.validation.length > 0) {
    const v = e.validation[0];
    const where = e.validationContext ?? 'body';
    const extra = v.params && typeof v.params.additionalProperty === 'string' ? `/${v.params.additionalProperty}` : '';
    // A key the caller wrote is part of the pointer: echoed bounded, as any caller's name.
    const pointer = echoedName(`${where === 'body' ? '' : `${where}:`}${v.instancePath ?? ''}${extra}` || '/');
    const message = extra ? 'unknown field' : (v.message ?? 'is invalid');
    return new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: ${message}`, { field: pointer });
  }
  if (isDatabaseUnavailable(e)) {
    return new RelayError('RELAY_ERR_DATABASE_UNAVAILABLE', 'The database is unreachable; changes are refused until it returns. Inference keeps serving from memory.');
  }
  if (e instanceof SyntaxError) return new RelayError('RELAY_ERR_INVALID_JSON', `request body is not valid JSON: ${e.message}`);
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.statusCode === 413) return new RelayError('RELAY_ERR_BODY_TOO_LARGE');
    if (e.statusCode === 415) return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE');
    return new RelayError('RELAY_ERR_BAD_REQUEST', e.message);
  }
  return new RelayError('RELAY_ERR_INTERNAL', 'internal error', { cause: err });
}

// Connection-level failures of pg: refused or reset sockets, Postgres shutting down
// (SQLSTATE class 08 and 57P0x), a pool that cannot hand out a connection in time, a query
// past its deadline (a server that stopped answering: database.queryTimeoutMs).
function isDatabaseUnavailable(e: FastifyLikeError | undefined): boolean {
  if (!e) return false;
  const code = e.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  if (/^08/.test(code) || /^57P0/.test(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(e.message ?? '');
}
