-- MCP sessions (Streamable HTTP transport, MCP 2025-11-25): one row per `initialize`, so any node of the
-- cluster can check `MCP-Session-Id`. A session is not a credential: every request still carries its bearer
-- credential, and a session answers only to the credential that opened it.
CREATE TABLE mcp_sessions (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id text NOT NULL,
  -- 'k:<api key id>' or 's:<sign-in session id>': the credential the session is bound to.
  credential_ref text NOT NULL,
  user_id uuid NOT NULL,
  protocol_version text NOT NULL,
  client_name text,
  client_version text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  PRIMARY KEY (org_id, id)
);
CREATE INDEX mcp_sessions_last_seen ON mcp_sessions (org_id, last_seen_at);
SELECT app_enable_tenant_rls('mcp_sessions');
