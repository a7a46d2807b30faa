-- When Relay last sent a request upstream with each host key (core/pipeline/last-used.ts); not
-- part of the catalog, so a use does not change the key's revision or its updated_at.
CREATE TABLE host_key_last_used (
  host_key_id   uuid PRIMARY KEY,
  last_used_at  timestamptz NOT NULL
);
