// Pins the list of error codes: adding, removing or re-statusing one is a deliberate change.
import t from 'tap';
import { ERROR_CODES, RelayError } from '../../core/errors.ts';

const PINNED: Record<string, number> = {
  RELAY_ERR_BAD_REQUEST: 400,
  RELAY_ERR_INVALID_JSON: 400,
  RELAY_ERR_CONTENT_UNSUPPORTED: 400,
  RELAY_ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  RELAY_ERR_BODY_TOO_LARGE: 413,
  RELAY_ERR_BODY_TIMEOUT: 408,
  RELAY_ERR_OVERLOADED: 503,
  RELAY_ERR_HEADERS_TOO_LARGE: 431,
  RELAY_ERR_UNAUTHENTICATED: 401,
  RELAY_ERR_RELAY_KEY_INVALID: 401,
  RELAY_ERR_FORBIDDEN: 403,
  RELAY_ERR_MODEL_NOT_GRANTED: 403,
  RELAY_ERR_FAST_MODE_NOT_ALLOWED: 403,
  RELAY_ERR_BUDGET_UNPRICED: 403,
  RELAY_ERR_CSRF: 403,
  RELAY_ERR_NOT_FOUND: 404,
  RELAY_ERR_METHOD_NOT_ALLOWED: 405,
  RELAY_ERR_MODEL_NOT_FOUND: 404,
  RELAY_ERR_RESPONSE_NOT_FOUND: 404,
  RELAY_ERR_ITEM_NOT_FOUND: 404,
  RELAY_ERR_RESPONSE_STATE_TOO_LARGE: 413,
  RELAY_ERR_NO_USABLE_HOST_KEY: 404,
  RELAY_ERR_CONFLICT: 409,
  RELAY_ERR_IN_USE: 409,
  RELAY_ERR_RATE_LIMITED: 429,
  RELAY_ERR_BUDGET_EXCEEDED: 429,
  RELAY_ERR_BUDGET_UNAVAILABLE: 503,
  RELAY_ERR_CONTEXT_WINDOW_EXCEEDED: 400,
  RELAY_ERR_CONTENT_FILTERED: 400,
  RELAY_ERR_RETRY_DEADLINE: 504,
  RELAY_ERR_UPSTREAM_RATE_LIMITED: 429,
  RELAY_ERR_LOGIN_THROTTLED: 429,
  RELAY_ERR_UPSTREAM_UNREACHABLE: 502,
  RELAY_ERR_UPSTREAM_BAD_RESPONSE: 502,
  RELAY_ERR_UPSTREAM_TIMEOUT: 502,
  RELAY_ERR_HOST_KEY_REFUSED: 502,
  RELAY_ERR_NO_HEALTHY_KEY: 503,
  RELAY_ERR_MASTER_KEY_MISSING: 400,
  RELAY_ERR_BACKEND_NOT_LOADED: 400,
  RELAY_ERR_ADAPTER_NOT_LOADED: 400,
  RELAY_ERR_QUERY_UNSUPPORTED: 400,
  RELAY_ERR_LOG_BACKEND_UNAVAILABLE: 503,
  RELAY_ERR_DATABASE_UNAVAILABLE: 503,
  RELAY_ERR_SHUTTING_DOWN: 503,
  RELAY_ERR_INTERNAL: 500,
};

t.test('every error code is pinned with its status', async (t) => {
  const actual = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, def]) => [code, def.status]));
  t.same(actual, PINNED);
});

t.test('every code is documented and named RELAY_ERR_*', async (t) => {
  for (const [code, def] of Object.entries(ERROR_CODES)) {
    t.match(code, /^RELAY_ERR_[A-Z_]+$/);
    t.ok(def.description.length > 10, `${code} has a description`);
  }
});

t.test('RelayError carries code, status, type and field', async (t) => {
  const err = new RelayError('RELAY_ERR_BAD_REQUEST', '/spec/hostId: bad', { field: '/spec/hostId' });
  t.same(err.toBody(), { code: 'RELAY_ERR_BAD_REQUEST', message: '/spec/hostId: bad', type: 'invalid_request', status: 400, field: '/spec/hostId' });
});

t.test('upstream statuses map to Relay codes the same way for every adapter', async (t) => {
  const { codeForUpstreamStatus } = await import('../../core/errors.ts');
  const cases: Array<[number, string]> = [
    [400, 'RELAY_ERR_BAD_REQUEST'], [401, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE'], [403, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE'],
    [404, 'RELAY_ERR_NOT_FOUND'], [408, 'RELAY_ERR_UPSTREAM_TIMEOUT'], [413, 'RELAY_ERR_BODY_TOO_LARGE'], [422, 'RELAY_ERR_BAD_REQUEST'],
    [429, 'RELAY_ERR_UPSTREAM_RATE_LIMITED'], [500, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE'], [502, 'RELAY_ERR_UPSTREAM_UNREACHABLE'],
    [503, 'RELAY_ERR_UPSTREAM_UNREACHABLE'], [504, 'RELAY_ERR_UPSTREAM_TIMEOUT'], [529, 'RELAY_ERR_UPSTREAM_UNREACHABLE'],
  ];
  for (const [status, code] of cases) t.equal(codeForUpstreamStatus(status), code, String(status));
});
