-- Collaborative editing (y-websocket): Yjs updates appended per document, compacted into one
-- snapshot row (is_snapshot) once enough updates accumulate.
CREATE TABLE document_updates (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  document_id uuid NOT NULL,
  seq bigserial,
  data bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, document_id, seq),
  FOREIGN KEY (org_id, document_id) REFERENCES documents (org_id, id) ON DELETE CASCADE
);
SELECT app_enable_tenant_rls('document_updates');

-- Single-use collaboration tickets (spec: 64 hex, 60 s). Only the SHA-256 of a ticket is stored.
CREATE TABLE collaboration_tickets (
  ticket_hash text PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL,
  session_id uuid,
  api_key_id uuid,
  scope text,
  expires_at timestamptz NOT NULL
);
CREATE INDEX collaboration_tickets_expiry ON collaboration_tickets (expires_at);
REVOKE ALL ON collaboration_tickets FROM platform_app;
