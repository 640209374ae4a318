-- The number of tasks of each project, kept by a trigger, so that an unfiltered GET /v1/projects/{id}/tasks reads
-- its pagination.total from a few rows instead of counting 1,000-10,000 index entries on every page
-- (docs/benchmarks.md). Tasks are created concurrently in one project (50 writers in the benchmark), so the count is
-- striped: each database session adds to its own row (pg_backend_pid() % 64) and a reader sums at most 64 rows.
-- Deletions subtract from the deleting session's row, so a single row may go negative; only the sum is meaningful.
-- No foreign key: a hard-deleted project's rows are removed by its own trigger after the cascade has deleted (and
-- uncounted) its tasks.
CREATE TABLE task_counts (
  org_id uuid NOT NULL,
  project_id uuid NOT NULL,
  stripe smallint NOT NULL,
  n integer NOT NULL,
  PRIMARY KEY (org_id, project_id, stripe)
);
SELECT app_enable_tenant_rls('task_counts');

CREATE FUNCTION app_count_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.org_id = NEW.org_id AND OLD.project_id = NEW.project_id THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO task_counts AS c (org_id, project_id, stripe, n) VALUES (OLD.org_id, OLD.project_id, pg_backend_pid() % 64, -1)
    ON CONFLICT (org_id, project_id, stripe) DO UPDATE SET n = c.n - 1;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO task_counts AS c (org_id, project_id, stripe, n) VALUES (NEW.org_id, NEW.project_id, pg_backend_pid() % 64, 1)
    ON CONFLICT (org_id, project_id, stripe) DO UPDATE SET n = c.n + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_count AFTER INSERT OR DELETE OR UPDATE OF org_id, project_id ON tasks
  FOR EACH ROW EXECUTE FUNCTION app_count_tasks();

CREATE FUNCTION app_forget_task_counts() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  DELETE FROM task_counts WHERE org_id = OLD.org_id AND project_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER projects_task_counts AFTER DELETE ON projects
  FOR EACH ROW EXECUTE FUNCTION app_forget_task_counts();

INSERT INTO task_counts (org_id, project_id, stripe, n)
SELECT org_id, project_id, 0, count(*) FROM tasks GROUP BY org_id, project_id;
