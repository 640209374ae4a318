-- Fair claims between organizations (src/core/jobs.ts claim): jobs used to be claimed oldest first across every
-- organization, so one organization's backlog (thousands of alert deliveries, large documents to index) delayed every
-- other organization's jobs until it drained. A claim now takes the organizations with due jobs in turn: those with
-- the fewest running jobs first, then the one served longest ago (job_turns), one job each per round.
--
-- job_turns: when a claim last took a job of the organization (one row per organization that ever had a job run).
-- Written only by the runner (owner connection); RLS like every tenant table.
CREATE TABLE job_turns (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  claimed_at timestamptz NOT NULL,
  PRIMARY KEY (org_id)
);
SELECT app_enable_tenant_rls('job_turns');

-- The organizations with pending jobs are found by walking this index (one probe per organization, not one row per
-- job), and each organization's oldest due jobs are read from it.
CREATE INDEX jobs_due_by_org ON jobs (org_id, run_at) WHERE status = 'pending';
