-- Foundation: application role, tenant helper, accounts and tenancy, audit.
-- Every tenant table: org_id first in its primary key, row-level security enabled and forced,
-- policy "tenant_isolation" for the application role and "owner_access" for the schema owner.

DO $$ BEGIN
  CREATE ROLE platform_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

DO $$ BEGIN
  EXECUTE format('GRANT platform_app TO %I', current_user);
EXCEPTION WHEN others THEN NULL; END $$;

GRANT USAGE ON SCHEMA public TO platform_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO platform_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO platform_app;

-- The organization bound to the current request; NULL when unset, so no row matches.
CREATE OR REPLACE FUNCTION app_current_org() RETURNS uuid
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT NULLIF(current_setting('app.org_id', true), '')::uuid $$;

-- Applies the tenant policies to one table; later migrations call it for every tenant table.
CREATE OR REPLACE FUNCTION app_enable_tenant_rls(tbl regclass, col text DEFAULT 'org_id') RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s TO platform_app USING (%I = app_current_org()) WITH CHECK (%I = app_current_org())', tbl, col, col);
  EXECUTE format('CREATE POLICY owner_access ON %s TO %I USING (true) WITH CHECK (true)', tbl, current_user);
END $$;

CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  private_jwk_sealed text NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz
);
REVOKE ALL ON signing_keys FROM platform_app;

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  password_hash text,
  mfa_totp_secret_sealed text,
  mfa_enabled boolean NOT NULL DEFAULT false,
  token_version integer NOT NULL DEFAULT 1,
  is_active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
-- Members of an organization see each other's public profile; the app role reads users, never writes them.
REVOKE ALL ON users FROM platform_app;
GRANT SELECT (id, email, name, is_active, created_at, updated_at) ON users TO platform_app;

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL,
  plan_tier text NOT NULL DEFAULT 'pro',
  subscription_status text NOT NULL DEFAULT 'none',
  features text[] NOT NULL DEFAULT '{}',
  settings jsonb NOT NULL DEFAULT '{}',
  session_duration_days integer NOT NULL DEFAULT 30,
  is_root boolean NOT NULL DEFAULT false,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX organizations_slug_key ON organizations (slug);
CREATE UNIQUE INDEX organizations_one_root ON organizations (is_root) WHERE is_root;
SELECT app_enable_tenant_rls('organizations', 'id');

CREATE TABLE memberships (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);
SELECT app_enable_tenant_rls('memberships');

CREATE TABLE sessions (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  mfa_at timestamptz,
  revoked_at timestamptz,
  expires_at timestamptz NOT NULL,
  ip text,
  user_agent text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX sessions_id ON sessions (id);
CREATE INDEX sessions_user ON sessions (user_id);
SELECT app_enable_tenant_rls('sessions');

-- One row per refresh token ever issued; a session is one rotation family.
CREATE TABLE refresh_tokens (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  token_hash text NOT NULL,
  session_id uuid NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, token_hash)
);
CREATE UNIQUE INDEX refresh_tokens_hash ON refresh_tokens (token_hash);
SELECT app_enable_tenant_rls('refresh_tokens');

CREATE TABLE api_keys (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  prefix text NOT NULL,
  key_hash text NOT NULL,
  name text NOT NULL,
  scopes text[],
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_by_user_id uuid NOT NULL REFERENCES users(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX api_keys_prefix ON api_keys (prefix);
CREATE UNIQUE INDEX api_keys_id ON api_keys (id);
SELECT app_enable_tenant_rls('api_keys');

CREATE TABLE scim_tokens (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  prefix text NOT NULL,
  token_hash text NOT NULL,
  created_by_user_id uuid,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX scim_tokens_prefix ON scim_tokens (prefix);
SELECT app_enable_tenant_rls('scim_tokens');

CREATE TABLE audit_log (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  actor_user_id uuid,
  actor_api_key_id uuid,
  credential_kind text NOT NULL,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text,
  request_id text,
  ip text,
  details jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX audit_log_org_time ON audit_log (org_id, created_at DESC);
SELECT app_enable_tenant_rls('audit_log');
