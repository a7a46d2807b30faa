// What each log backend means, in the operator's words (SPEC.md "Backend meanings").
export const BACKEND_NOTES: Record<string, string> = {
  file: 'JSONL files on disk in the data directory.',
  clickhouse: 'An analytical store; best for large volumes and long windows.',
  postgres: 'The relational store Relay already uses for its catalog.',
  valkey: 'A Redis-compatible store holding short-lived recent history.',
  s3: 'Object storage with content-addressed blobs; credentials come from the environment or the encrypted store.',
};
