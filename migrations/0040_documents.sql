-- Document library (spec 2.4, 4.5). Search: a weighted tsvector (title A, content B) built by the
-- background job `documents.index` in the document's own text-search configuration (`language`).
CREATE TABLE documents (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid,
  parent_id uuid,
  kind text NOT NULL DEFAULT 'document' CHECK (kind IN ('document', 'sheet', 'deck')),
  title text NOT NULL,
  content text NOT NULL DEFAULT '',
  content_type text NOT NULL DEFAULT 'markdown',
  tags text[] NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  language regconfig NOT NULL DEFAULT 'english',
  search tsvector,
  -- Bumped by every title/content change; the index job only marks the version it indexed.
  content_version integer NOT NULL DEFAULT 1,
  is_indexed boolean NOT NULL DEFAULT false,
  indexed_at timestamptz,
  file_key text,
  file_size bigint,
  file_content_type text,
  file_deleted_at timestamptz,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, parent_id) REFERENCES documents (org_id, id) ON DELETE SET NULL (parent_id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE SET NULL (project_id)
);
CREATE INDEX documents_org_updated ON documents (org_id, updated_at DESC, id DESC);
CREATE INDEX documents_org_created ON documents (org_id, created_at DESC, id DESC);
CREATE INDEX documents_org_title ON documents (org_id, lower(title), id);
CREATE INDEX documents_project ON documents (org_id, project_id, updated_at DESC) WHERE project_id IS NOT NULL;
CREATE INDEX documents_parent ON documents (org_id, parent_id, updated_at DESC) WHERE parent_id IS NOT NULL;
CREATE INDEX documents_search ON documents USING gin (search);
-- Sheets and decks: names unique per project and kind (409 CONFLICT).
CREATE UNIQUE INDEX documents_project_kind_name ON documents (org_id, project_id, kind, lower(title)) WHERE kind <> 'document';
SELECT app_enable_tenant_rls('documents');
