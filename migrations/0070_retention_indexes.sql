-- Retention (docs/decisions.md, "Retention"): every area deletes what has served its purpose, once an hour, a batch at a
-- time (src/core/retention.ts). These indexes find those rows without reading the tables whole.
-- Jobs: done and superseded kept 7 days, failed 30 (src/core/jobs-retention.ts).
CREATE INDEX jobs_finished ON jobs (updated_at) WHERE status IN ('done', 'failed', 'superseded');
-- Sign-in sessions 30 days after they ended (expiry or revocation: LEAST skips a null revoked_at), with their refresh
-- tokens; spent refresh tokens 30 days after use (src/areas/accounts/retention.ts).
CREATE INDEX sessions_ended ON sessions (LEAST(expires_at, revoked_at));
CREATE INDEX refresh_tokens_session ON refresh_tokens (org_id, session_id);
CREATE INDEX refresh_tokens_spent ON refresh_tokens (used_at) WHERE used_at IS NOT NULL;
-- Notifications, finished alert deliveries (src/areas/workspace/retention.ts).
CREATE INDEX notifications_created ON notifications (created_at);
CREATE INDEX alert_deliveries_finished ON alert_deliveries (updated_at) WHERE status IN ('delivered', 'failed');
-- MCP sessions unseen for 30 days, of every organization (src/transports/mcp/sessions.ts).
CREATE INDEX mcp_sessions_seen ON mcp_sessions (last_seen_at);
