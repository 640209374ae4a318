-- What every audited write pays for its audit row, and what every new task pays for its organization (measured with
-- pgbench on the statement of POST /v1/projects/{id}/tasks, one client: about 45 µs of 390 went to the two audit
-- items below; docs/benchmarks.md).
--
-- 1. The audit trail does not hang on the organization row: no foreign key (its check locks the organization row
--    FOR KEY SHARE on every audited write of every member, and would delete the trail with the organization).
--    Organizations are never deleted by the platform (soft delete, deleted_at), and an audit record is meant to
--    outlive what it describes. Row-level security still keeps each organization's trail its own.
ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_org_id_fkey;
-- 2. One index: the primary key (org_id, id) already orders an organization's trail by time, ids being UUIDv7 made
--    when the row is written (src/core/ids.ts), so (org_id, created_at) was a second b-tree insert for no reader.
DROP INDEX IF EXISTS audit_log_org_time;
-- 3. A task's organization is checked by its project's key (org_id, project_id), which cascades with the project and
--    so with the organization; the separate key to organizations was a second check of the same fact.
ALTER TABLE tasks DROP CONSTRAINT IF EXISTS tasks_org_id_fkey;

-- 4. Task status changes are announced on the channel `task_statuses_changed` (payload: the organization id; `*`
--    after a TRUNCATE), so each server process can keep in memory the status a project's new tasks start in
--    (src/areas/projects/first-open-status.ts) instead of looking it up on every task created. One trigger function
--    for every such channel (named by the trigger's argument; core/db/notified-cache.ts), which alert_rules (0050)
--    now uses too.
CREATE FUNCTION app_notify_org_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify(TG_ARGV[0], '*');
  ELSE
    PERFORM pg_notify(TG_ARGV[0], (CASE WHEN TG_OP = 'DELETE' THEN OLD.org_id ELSE NEW.org_id END)::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER task_statuses_changed AFTER INSERT OR UPDATE OR DELETE ON task_statuses
  FOR EACH ROW EXECUTE FUNCTION app_notify_org_changed('task_statuses_changed');
CREATE TRIGGER task_statuses_truncated AFTER TRUNCATE ON task_statuses
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_org_changed('task_statuses_changed');

DROP TRIGGER alert_rules_changed ON alert_rules;
DROP TRIGGER alert_rules_truncated ON alert_rules;
DROP FUNCTION app_notify_alert_rules_changed();
CREATE TRIGGER alert_rules_changed AFTER INSERT OR UPDATE OR DELETE ON alert_rules
  FOR EACH ROW EXECUTE FUNCTION app_notify_org_changed('alert_rules_changed');
CREATE TRIGGER alert_rules_truncated AFTER TRUNCATE ON alert_rules
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_org_changed('alert_rules_changed');
