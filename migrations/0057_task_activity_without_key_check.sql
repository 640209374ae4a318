-- A task's activity rows no longer hang on a foreign key to the task (measured with pgbench on the statement of
-- POST /v1/projects/{id}/tasks, one client: ~40 us of ~455 went to the key's check; docs/benchmarks.md).
--
-- The check ran on every activity row written: a query on tasks that locks the task row FOR KEY SHARE, which for a
-- new task means writing (and logging) a lock on the row the same statement had just inserted. It guarded nothing the
-- code does not already guarantee: activity rows are only written from the task row itself (the INSERT ... RETURNING
-- of a task's creation, in the same statement) or by a change that holds the task's row lock (FOR NO KEY UPDATE) in
-- its transaction. The key's one other duty, removing a deleted task's activity, moves to a trigger, as comments
-- already do (0041).
ALTER TABLE task_activity DROP CONSTRAINT IF EXISTS task_activity_org_id_task_id_fkey;

CREATE FUNCTION app_delete_task_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM task_activity WHERE org_id = OLD.org_id AND task_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_activity_gone AFTER DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION app_delete_task_activity();
