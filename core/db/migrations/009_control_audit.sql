-- The control plane's audit trail (core/control/audit-trail.ts): one row per change a signed-in
-- caller or the admin token asked for, and per sign-in. No body is kept: bodies carry secrets.
CREATE TABLE control_audit (
  id          bigserial PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  actor_kind  text NOT NULL CHECK (actor_kind IN ('admin-token', 'user')),
  actor       text,
  method      text NOT NULL,
  route       text NOT NULL,
  target      text,
  status      integer NOT NULL,
  request_id  text NOT NULL,
  client_ip   text NOT NULL
);
CREATE INDEX control_audit_by_actor ON control_audit (actor, id DESC);
CREATE INDEX control_audit_by_target ON control_audit (target, id DESC);
