-- Projects and their sub-resources (spec 2.2, 2.3, 4.4). Tenant tables: org_id first in every key and index.

-- UUIDv7 in SQL, for rows the database itself creates (default task statuses of a new organization).
CREATE OR REPLACE FUNCTION app_uuidv7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING
    substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;

CREATE TABLE projects (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  slug text NOT NULL,
  description text,
  prefix text,
  visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private', 'internal')),
  category_id text,
  owner_scope text NOT NULL DEFAULT 'organization',
  is_active boolean NOT NULL DEFAULT true,
  settings jsonb NOT NULL DEFAULT '{}',
  created_by_user_id uuid,
  archived_at timestamptz,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
-- One deployment is one environment, so "unique per organization and environment" is unique per organization here.
-- Archived and soft-deleted projects keep their slug (they can be restored with PUT is_active:true).
CREATE UNIQUE INDEX projects_slug_key ON projects (org_id, slug);
-- The default listing (status=active), newest first; status=all uses the primary key backwards.
CREATE INDEX projects_org_active ON projects (org_id, id DESC) WHERE is_active;
CREATE INDEX projects_org_inactive ON projects (org_id, id DESC) WHERE NOT is_active;
SELECT app_enable_tenant_rls('projects');

CREATE TABLE project_members (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  project_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, project_id, user_id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE
);
SELECT app_enable_tenant_rls('project_members');

CREATE TABLE project_categories (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid NOT NULL,
  parent_id uuid,
  name text NOT NULL,
  description text,
  color text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, parent_id) REFERENCES project_categories (org_id, id) ON DELETE CASCADE
);
CREATE INDEX project_categories_project ON project_categories (org_id, project_id, id);
CREATE UNIQUE INDEX project_categories_name_key ON project_categories (org_id, project_id, parent_id, lower(name)) NULLS NOT DISTINCT;
SELECT app_enable_tenant_rls('project_categories');

CREATE TABLE project_phases (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid NOT NULL,
  name text NOT NULL,
  description text,
  sort_order integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE
);
CREATE INDEX project_phases_order ON project_phases (org_id, project_id, sort_order, id);
SELECT app_enable_tenant_rls('project_phases');

CREATE TABLE specs (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  project_id uuid NOT NULL,
  title text NOT NULL,
  content text NOT NULL DEFAULT '',
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE
);
CREATE INDEX specs_project ON specs (org_id, project_id, id DESC);
SELECT app_enable_tenant_rls('specs');
