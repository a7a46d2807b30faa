-- The audit trail also records what catalog.file changed when an instance started (actor_kind
-- catalog-file, the actor being the file's path): core/control/audit-store.ts.
ALTER TABLE control_audit DROP CONSTRAINT control_audit_actor_kind_check;
ALTER TABLE control_audit ADD CONSTRAINT control_audit_actor_kind_check CHECK (actor_kind IN ('admin-token', 'user', 'cli', 'catalog-file'));
