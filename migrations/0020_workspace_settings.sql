-- Workspace settings (spec 2.8, 4.6): per-user documents of one organization, and saved views.
-- Organization settings live in organizations.settings (foundation).

-- One JSON document per user, organization and kind ('personalization', 'preferences').
CREATE TABLE user_settings (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('personalization', 'preferences')),
  value jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id, kind)
);
SELECT app_enable_tenant_rls('user_settings');

-- Saved views: named filters of a list a user keeps (at most 100 per user and organization).
CREATE TABLE saved_views (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name text NOT NULL,
  resource text NOT NULL,
  filters jsonb NOT NULL DEFAULT '{}',
  sort jsonb,
  columns text[],
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX saved_views_user ON saved_views (org_id, user_id, id);
SELECT app_enable_tenant_rls('saved_views');
