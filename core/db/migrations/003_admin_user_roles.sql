-- Dashboard users get a role (admin: everything; viewer: reads, never a secret or a change)
-- and can be disabled without being deleted (core/control/user-routes.ts).
ALTER TABLE admin_users ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer'));
ALTER TABLE admin_users ADD COLUMN enabled boolean NOT NULL DEFAULT true;
