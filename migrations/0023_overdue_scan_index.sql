-- The overdue-task scan (workspace notifications) reads tasks by due date across organizations once a
-- minute; without this it would scan every task. Partial: tasks without a due date cost nothing.
CREATE INDEX IF NOT EXISTS tasks_due_date_workspace ON tasks (due_date) WHERE due_date IS NOT NULL;
