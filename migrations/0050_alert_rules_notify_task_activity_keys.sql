-- 1. Alert rule changes are announced on the channel `alert_rules_changed` (payload: the organization id; `*` after a
--    TRUNCATE), so each server process can keep in memory which event types an organization has enabled rules for
--    and spend no database read on the events no rule wants (src/areas/workspace/alert-rules/enabled-rule-types.ts).
CREATE FUNCTION app_notify_alert_rules_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('alert_rules_changed', '*');
  ELSE
    PERFORM pg_notify('alert_rules_changed', (CASE WHEN TG_OP = 'DELETE' THEN OLD.org_id ELSE NEW.org_id END)::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER alert_rules_changed AFTER INSERT OR UPDATE OR DELETE ON alert_rules
  FOR EACH ROW EXECUTE FUNCTION app_notify_alert_rules_changed();
CREATE TRIGGER alert_rules_truncated AFTER TRUNCATE ON alert_rules
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_alert_rules_changed();

-- 2. A task's activity feed is its only reader, so its key is the feed's order: one index instead of two, and no
--    foreign key to organizations (the row's task already belongs to the organization and cascades with it).
ALTER TABLE task_activity DROP CONSTRAINT task_activity_org_id_fkey;
ALTER TABLE task_activity DROP CONSTRAINT task_activity_pkey;
ALTER TABLE task_activity ADD PRIMARY KEY (org_id, task_id, id);
DROP INDEX task_activity_task;
