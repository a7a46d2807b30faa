-- The slug of the catalog entity an audit row names, as it was when the change was made (a
-- deleted entity can no longer be looked up by its id).
ALTER TABLE control_audit ADD COLUMN target_name text;
