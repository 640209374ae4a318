-- Offline sync change log (spec 4.5 GET /v1/sync/{resourceType}). One row per synced record: the
-- latest change sequence and whether the record is deleted (a tombstone). Triggers on every synced
-- table keep it current. Writers take a per-organization transaction advisory lock before drawing a
-- sequence number, so within an organization sequence order is commit order: a reader that passes
-- the same lock once (a barrier) knows every sequence at or below the current maximum is committed,
-- and no later commit can ever take a smaller number. See docs/documents.md "Offline sync".
CREATE SEQUENCE sync_change_seq;

CREATE TABLE sync_changes (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  resource_type text NOT NULL,
  id uuid NOT NULL,
  change_seq bigint NOT NULL,
  changed_at timestamptz NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  PRIMARY KEY (org_id, resource_type, id)
);
CREATE UNIQUE INDEX sync_changes_seq ON sync_changes (org_id, resource_type, change_seq);
CREATE INDEX sync_changes_org_seq ON sync_changes (org_id, change_seq);
SELECT app_enable_tenant_rls('sync_changes');

CREATE OR REPLACE FUNCTION app_sync_lock(org uuid) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(404040, hashtext(org::text))
$$;

CREATE OR REPLACE FUNCTION app_sync_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  PERFORM app_sync_lock(r.org_id);
  INSERT INTO sync_changes (org_id, resource_type, id, change_seq, changed_at, deleted)
  VALUES (r.org_id, TG_ARGV[0], r.id, nextval('sync_change_seq'), clock_timestamp(), TG_OP = 'DELETE')
  ON CONFLICT (org_id, resource_type, id) DO UPDATE
    SET change_seq = EXCLUDED.change_seq, changed_at = EXCLUDED.changed_at, deleted = EXCLUDED.deleted;
  RETURN NULL;
END $$;

CREATE TRIGGER documents_sync AFTER INSERT OR UPDATE OR DELETE ON documents
  FOR EACH ROW EXECUTE FUNCTION app_sync_track('documents');

-- Tables of the projects area (migrations 0010-0019), tracked when present.
DO $$ BEGIN
  IF to_regclass('tasks') IS NOT NULL THEN
    CREATE TRIGGER tasks_sync AFTER INSERT OR UPDATE OR DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION app_sync_track('tasks');
  END IF;
  IF to_regclass('projects') IS NOT NULL THEN
    CREATE TRIGGER projects_sync AFTER INSERT OR UPDATE OR DELETE ON projects FOR EACH ROW EXECUTE FUNCTION app_sync_track('projects');
  END IF;
END $$;

-- Entities (named things of the knowledge graph), relationships between them, and comments on
-- documents or tasks: small resources of their own, synced offline.
CREATE TABLE entities (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid,
  entity_type text NOT NULL,
  name text NOT NULL,
  description text,
  properties jsonb NOT NULL DEFAULT '{}',
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE SET NULL (project_id)
);
CREATE INDEX entities_org ON entities (org_id, id DESC);
CREATE INDEX entities_type ON entities (org_id, entity_type, id DESC);
SELECT app_enable_tenant_rls('entities');
CREATE TRIGGER entities_sync AFTER INSERT OR UPDATE OR DELETE ON entities FOR EACH ROW EXECUTE FUNCTION app_sync_track('entities');

CREATE TABLE relationships (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  source_entity_id uuid NOT NULL,
  target_entity_id uuid NOT NULL,
  relationship_type text NOT NULL,
  properties jsonb NOT NULL DEFAULT '{}',
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, source_entity_id) REFERENCES entities (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, target_entity_id) REFERENCES entities (org_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX relationships_edge ON relationships (org_id, source_entity_id, target_entity_id, relationship_type);
CREATE INDEX relationships_target ON relationships (org_id, target_entity_id);
SELECT app_enable_tenant_rls('relationships');
CREATE TRIGGER relationships_sync AFTER INSERT OR UPDATE OR DELETE ON relationships FOR EACH ROW EXECUTE FUNCTION app_sync_track('relationships');

CREATE TABLE comments (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('document', 'task')),
  target_id uuid NOT NULL,
  body text NOT NULL,
  author_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX comments_target ON comments (org_id, target_type, target_id, id);
SELECT app_enable_tenant_rls('comments');
CREATE TRIGGER comments_sync AFTER INSERT OR UPDATE OR DELETE ON comments FOR EACH ROW EXECUTE FUNCTION app_sync_track('comments');

-- Comments die with their target (no FK across two target tables).
CREATE OR REPLACE FUNCTION app_delete_comments_of() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM comments WHERE org_id = OLD.org_id AND target_type = TG_ARGV[0] AND target_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER documents_comments_gone AFTER DELETE ON documents FOR EACH ROW EXECUTE FUNCTION app_delete_comments_of('document');
DO $$ BEGIN
  IF to_regclass('tasks') IS NOT NULL THEN
    CREATE TRIGGER tasks_comments_gone AFTER DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION app_delete_comments_of('task');
  END IF;
END $$;
