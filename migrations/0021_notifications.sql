-- Notifications (spec 2.7, 4.6): created by the platform for one user of one organization.
CREATE TABLE notifications (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  notification_type text NOT NULL DEFAULT 'info'
    CHECK (notification_type IN ('info', 'success', 'warning', 'error', 'action_required')),
  title text NOT NULL,
  body text,
  channel text NOT NULL DEFAULT 'in_app' CHECK (channel IN ('in_app', 'email', 'push', 'slack')),
  is_read boolean NOT NULL DEFAULT false,
  is_archived boolean NOT NULL DEFAULT false,
  action_url text,
  event_type text,
  target_type text,
  target_id text,
  alert_rule_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
-- The inbox: one user's notifications, newest first (ids are UUIDv7, so id order is time order).
CREATE INDEX notifications_user ON notifications (org_id, user_id, id DESC);
CREATE INDEX notifications_user_unread ON notifications (org_id, user_id, id DESC) WHERE NOT is_read;
SELECT app_enable_tenant_rls('notifications');

-- Overdue tasks already announced: one row per task and due date, so a task is announced once
-- (again only if its due date is moved and passes once more). No foreign key to tasks: the row
-- must survive as long as the memory is useful, and the tasks migrations belong to another area.
CREATE TABLE task_overdue_notices (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  task_id uuid NOT NULL,
  due_date timestamptz NOT NULL,
  assigned_to uuid,
  notified_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, task_id, due_date)
);
SELECT app_enable_tenant_rls('task_overdue_notices');
