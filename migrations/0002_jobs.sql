-- Durable background jobs: enqueued in the same transaction as the change they follow,
-- claimed with FOR UPDATE SKIP LOCKED by any node, retried with backoff, reclaimed after a crash.
CREATE TABLE jobs (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 8,
  run_at timestamptz NOT NULL DEFAULT now(),
  locked_at timestamptz,
  last_error text,
  dedupe_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX jobs_due ON jobs (run_at) WHERE status = 'pending';
CREATE INDEX jobs_running ON jobs (locked_at) WHERE status = 'running';
CREATE UNIQUE INDEX jobs_dedupe ON jobs (org_id, kind, dedupe_key) WHERE dedupe_key IS NOT NULL AND status = 'pending';
SELECT app_enable_tenant_rls('jobs');
