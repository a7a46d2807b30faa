// Paths pino removes from every log line: no credential reaches a log.
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-gw-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-gw-api-key"]',
  'headers.cookie',
  'password',
  '*.password',
  'plaintext',
  '*.plaintext',
  'value',
  'spec.value',
  // PGlite puts a failed query's parameters on its error: sealed host-key values, key and session hashes.
  'err.params',
  'err.cause.params',
];
