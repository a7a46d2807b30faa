-- The control plane's audit trail (core/control/audit-trail.ts): one row per change a signed-in
-- caller or the admin token asked for, per sign-in, and per change the relay CLI wrote straight
-- to the database. No body is kept: bodies carry secrets. target_name is a catalog entity's slug
-- as it was when the change was made (a deleted entity can no longer be looked up by its id).
CREATE TABLE control_audit (
  id           bigserial PRIMARY KEY,
  at           timestamptz NOT NULL DEFAULT now(),
  actor_kind   text NOT NULL CHECK (actor_kind IN ('admin-token', 'user', 'cli')),
  actor        text,
  method       text NOT NULL,
  route        text NOT NULL,
  target       text,
  target_name  text,
  status       integer NOT NULL,
  request_id   text NOT NULL,
  client_ip    text NOT NULL
);
CREATE INDEX control_audit_by_actor ON control_audit (actor, id DESC);
CREATE INDEX control_audit_by_target ON control_audit (target, id DESC);
