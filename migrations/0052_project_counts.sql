-- The number of projects of each organization in each state, kept by a trigger, so that GET /v1/projects reads its
-- pagination.total from one row instead of counting up to tens of thousands of index entries on every page
-- (docs/benchmarks.md: with 10,000 projects the count was most of the statement's time). Projects are written
-- rarely (creation and unarchiving already serialize per organization), so one counter row per organization is
-- not a point of contention. No foreign key: the row of a hard-deleted organization is removed by its own trigger
-- after the cascade has deleted (and uncounted) the projects.
CREATE TABLE project_counts (
  org_id uuid PRIMARY KEY,
  active integer NOT NULL DEFAULT 0,
  archived integer NOT NULL DEFAULT 0,
  deleted integer NOT NULL DEFAULT 0
);
SELECT app_enable_tenant_rls('project_counts');

-- The three states of the status filter (projects.repo.ts statusWhere): active, archived (inactive, not deleted), deleted.
CREATE FUNCTION app_project_state(is_active boolean, deleted_at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN is_active THEN 'active' WHEN deleted_at IS NULL THEN 'archived' ELSE 'deleted' END $$;

CREATE FUNCTION app_count_projects() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was text;
  now_is text;
BEGIN
  IF TG_OP <> 'INSERT' THEN was := app_project_state(OLD.is_active, OLD.deleted_at); END IF;
  IF TG_OP <> 'DELETE' THEN now_is := app_project_state(NEW.is_active, NEW.deleted_at); END IF;
  IF TG_OP = 'UPDATE' AND was = now_is AND OLD.org_id = NEW.org_id THEN RETURN NULL; END IF;
  IF was IS NOT NULL THEN
    UPDATE project_counts SET active = active - (was = 'active')::int, archived = archived - (was = 'archived')::int,
      deleted = deleted - (was = 'deleted')::int WHERE org_id = OLD.org_id;
  END IF;
  IF now_is IS NOT NULL THEN
    INSERT INTO project_counts AS c (org_id, active, archived, deleted)
    VALUES (NEW.org_id, (now_is = 'active')::int, (now_is = 'archived')::int, (now_is = 'deleted')::int)
    ON CONFLICT (org_id) DO UPDATE SET active = c.active + EXCLUDED.active, archived = c.archived + EXCLUDED.archived,
      deleted = c.deleted + EXCLUDED.deleted;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER projects_count AFTER INSERT OR UPDATE OF is_active, deleted_at, org_id OR DELETE ON projects
  FOR EACH ROW EXECUTE FUNCTION app_count_projects();

CREATE FUNCTION app_forget_project_counts() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  DELETE FROM project_counts WHERE org_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER organizations_project_counts AFTER DELETE ON organizations
  FOR EACH ROW EXECUTE FUNCTION app_forget_project_counts();

INSERT INTO project_counts (org_id, active, archived, deleted)
SELECT org_id, count(*) FILTER (WHERE is_active), count(*) FILTER (WHERE NOT is_active AND deleted_at IS NULL),
  count(*) FILTER (WHERE NOT is_active AND deleted_at IS NOT NULL)
FROM projects GROUP BY org_id;
