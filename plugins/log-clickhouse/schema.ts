// The usage table: MergeTree, partitioned by month, sorted by (started_at, request_id) so that
// newest-first pages and time windows read in order; bloom-filter skip indexes serve the id filters.
export function usageTableDdl(table: string, ttlDays: number): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
    request_id String,
    started_at DateTime64(3, 'UTC'),
    finished_at DateTime64(3, 'UTC'),
    relay_key_id Nullable(String),
    relay_key_prefix Nullable(String),
    policy_id Nullable(String),
    model_requested Nullable(String),
    model_id Nullable(String),
    model_slug Nullable(String),
    host_id Nullable(String),
    host_key_id Nullable(String),
    provider_id Nullable(String),
    upstream_model Nullable(String),
    inbound_shape LowCardinality(String),
    upstream_shape LowCardinality(Nullable(String)),
    status UInt16,
    error_code LowCardinality(Nullable(String)),
    stream Bool,
    input_tokens UInt64,
    output_tokens UInt64,
    cache_read_tokens UInt64,
    cache_write_tokens UInt64,
    reasoning_tokens UInt64,
    cost Nullable(Float64),
    currency LowCardinality(Nullable(String)),
    latency_ms Float64,
    ttfb_ms Nullable(Float64),
    attempts UInt16,
    client_aborted Bool,
    client LowCardinality(Nullable(String)),
    extras Map(String, String),
    client_request_id Nullable(String),
    upstream_request_id Nullable(String),
    INDEX request_id_idx request_id TYPE bloom_filter GRANULARITY 4,
    INDEX policy_idx policy_id TYPE bloom_filter GRANULARITY 4,
    INDEX relay_key_idx relay_key_id TYPE bloom_filter GRANULARITY 4,
    INDEX model_idx model_id TYPE bloom_filter GRANULARITY 4
  ) ENGINE = MergeTree
  PARTITION BY toYYYYMM(started_at)
  ORDER BY (started_at, request_id)
  ${ttlDays > 0 ? `TTL toDateTime(started_at) + INTERVAL ${Math.floor(ttlDays)} DAY` : ''}
  SETTINGS non_replicated_deduplication_window = 1000`;
}

/** Columns added after the table's first release: tables made before them gain them on start. */
export function usageTableAdditions(table: string): string[] {
  return [
    `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS client_request_id Nullable(String)`,
    `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS upstream_request_id Nullable(String)`,
  ];
}
