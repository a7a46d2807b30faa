-- The catalog: one table for the eight kinds, every write announced with NOTIFY.
CREATE SEQUENCE IF NOT EXISTS catalog_revision;

CREATE TABLE catalog_entities (
  id            uuid PRIMARY KEY,
  kind          text NOT NULL,
  slug          text NOT NULL,
  display_name  text NOT NULL,
  spec          jsonb NOT NULL,
  -- relay keys: sha256(plaintext) in hex; the plaintext is never stored
  secret_hash   text,
  -- host keys: AES-256-GCM ciphertext of the upstream secret
  sealed_value  text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  revision      bigint NOT NULL DEFAULT nextval('catalog_revision'),
  CONSTRAINT catalog_entities_kind_slug UNIQUE (kind, slug)
);

CREATE UNIQUE INDEX catalog_entities_secret_hash ON catalog_entities (secret_hash) WHERE secret_hash IS NOT NULL;
CREATE INDEX catalog_entities_kind_created ON catalog_entities (kind, created_at, id);

CREATE FUNCTION catalog_notify() RETURNS trigger AS $$
DECLARE
  rec record;
  rev bigint;
BEGIN
  IF TG_OP = 'DELETE' THEN
    rec := OLD;
    rev := nextval('catalog_revision');
  ELSE
    rec := NEW;
    rev := NEW.revision;
  END IF;
  PERFORM pg_notify('relay_catalog', json_build_object('kind', rec.kind, 'id', rec.id, 'op', TG_OP, 'revision', rev)::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER catalog_entities_notify
  AFTER INSERT OR UPDATE OR DELETE ON catalog_entities
  FOR EACH ROW EXECUTE FUNCTION catalog_notify();

-- Runtime settings (usage logging, payload logging), announced the same way.
CREATE TABLE settings (
  name        text PRIMARY KEY,
  value       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION settings_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('relay_settings', NEW.name);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER settings_notify
  AFTER INSERT OR UPDATE ON settings
  FOR EACH ROW EXECUTE FUNCTION settings_notify();

-- Dashboard users and their sessions (shared by every instance).
CREATE TABLE admin_users (
  id             uuid PRIMARY KEY,
  username       text NOT NULL UNIQUE,
  password_hash  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE admin_sessions (
  -- sha256 of the session token; the token itself lives only in the cookie
  token_hash    text PRIMARY KEY,
  user_id       uuid NOT NULL REFERENCES admin_users (id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);

CREATE INDEX admin_sessions_expires ON admin_sessions (expires_at);
