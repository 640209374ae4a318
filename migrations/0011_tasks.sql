-- Tasks, their workflow statuses, dependencies and activity feed (spec 2.3, 4.4).

-- Statuses per organization (project_id NULL) or scoped to one project (a project row overrides the
-- organization row of the same key). is_done marks closed states (done, cancelled).
CREATE TABLE task_statuses (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid,
  key text NOT NULL,
  name text NOT NULL,
  sort_order integer NOT NULL,
  is_done boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX task_statuses_key ON task_statuses (org_id, project_id, key) NULLS NOT DISTINCT;
SELECT app_enable_tenant_rls('task_statuses');

-- The default workflow every organization starts with.
CREATE OR REPLACE FUNCTION app_seed_task_statuses(o uuid) RETURNS void LANGUAGE sql AS $$
  INSERT INTO task_statuses (org_id, id, project_id, key, name, sort_order, is_done)
  SELECT o, app_uuidv7(), NULL, v.key, v.name, v.ord, v.done
  FROM (VALUES ('todo', 'To do', 10, false), ('in_progress', 'In progress', 20, false), ('in_review', 'In review', 30, false),
               ('done', 'Done', 40, true), ('cancelled', 'Cancelled', 50, true)) AS v(key, name, ord, done)
  ON CONFLICT DO NOTHING
$$;

-- Runs as the migration owner, so it works whichever role inserts the organization.
CREATE OR REPLACE FUNCTION organizations_seed_task_statuses() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  PERFORM app_seed_task_statuses(NEW.id);
  RETURN NEW;
END $$;
CREATE TRIGGER organizations_task_statuses AFTER INSERT ON organizations
  FOR EACH ROW EXECUTE FUNCTION organizations_seed_task_statuses();
SELECT app_seed_task_statuses(id) FROM organizations;

-- Tasks are deleted for real (DELETE /v1/tasks/{id}); the audit log keeps the trace.
CREATE TABLE tasks (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid NOT NULL,
  spec_id uuid,
  parent_task_id uuid,
  title text NOT NULL,
  description text,
  status_id uuid NOT NULL,
  priority text NOT NULL DEFAULT 'medium' CHECK (priority IN ('critical', 'high', 'medium', 'low')),
  assigned_to uuid REFERENCES users(id) ON DELETE SET NULL,
  due_date timestamptz,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, spec_id) REFERENCES specs (org_id, id) ON DELETE SET NULL (spec_id),
  FOREIGN KEY (org_id, parent_task_id) REFERENCES tasks (org_id, id) ON DELETE SET NULL (parent_task_id),
  FOREIGN KEY (org_id, status_id) REFERENCES task_statuses (org_id, id)
);
-- List orders are newest first; each filter of GET .../tasks has an index with org_id first.
CREATE INDEX tasks_project ON tasks (org_id, project_id, id DESC);
CREATE INDEX tasks_project_assignee ON tasks (org_id, project_id, assigned_to, id DESC);
CREATE INDEX tasks_project_status ON tasks (org_id, project_id, status_id, id DESC);
CREATE INDEX tasks_spec ON tasks (org_id, spec_id, id DESC) WHERE spec_id IS NOT NULL;
CREATE INDEX tasks_parent ON tasks (org_id, parent_task_id) WHERE parent_task_id IS NOT NULL;
CREATE INDEX tasks_assignee ON tasks (org_id, assigned_to) WHERE assigned_to IS NOT NULL;
SELECT app_enable_tenant_rls('tasks');

CREATE TABLE task_dependencies (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  task_id uuid NOT NULL,
  depends_on_task_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, task_id, depends_on_task_id),
  FOREIGN KEY (org_id, task_id) REFERENCES tasks (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, depends_on_task_id) REFERENCES tasks (org_id, id) ON DELETE CASCADE,
  CHECK (task_id <> depends_on_task_id)
);
CREATE INDEX task_dependencies_reverse ON task_dependencies (org_id, depends_on_task_id);
SELECT app_enable_tenant_rls('task_dependencies');

-- One row per changed field: who, when, from what to what.
CREATE TABLE task_activity (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  task_id uuid NOT NULL,
  action text NOT NULL,
  field text,
  old_value jsonb,
  new_value jsonb,
  actor_user_id uuid,
  actor_api_key_id uuid,
  actor_kind text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, task_id) REFERENCES tasks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX task_activity_task ON task_activity (org_id, task_id, id DESC);
SELECT app_enable_tenant_rls('task_activity');
