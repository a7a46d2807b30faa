-- When each relay key was last accepted (core/pipeline/relay-key-last-used.ts); not part of the
-- catalog, so a use does not change the key's revision or its updated_at.
CREATE TABLE relay_key_last_used (
  relay_key_id  uuid PRIMARY KEY,
  last_used_at  timestamptz NOT NULL
);
