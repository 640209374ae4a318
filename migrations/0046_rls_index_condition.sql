-- Tenant policies as `org_id = ANY (ARRAY[app_current_org()])` instead of `org_id = app_current_org()`.
--
-- Why: our statements also say `org_id = $1` (defence in depth). With two equalities on one column PostgreSQL
-- builds an equivalence class and turns the pair into a one-time filter `app_current_org() = $1` on a Result
-- node placed over the scan, so every row of the scan passes through one more executor node: a count over the
-- 10,000 projects of an organization took 2.3 ms instead of 1.5 ms. An array comparison does not join the
-- equivalence class; it becomes an index condition of its own (evaluated once per scan), and the scan is as
-- cheap as the owner's. Same rows, same isolation: with app.org_id unset the array holds NULL and nothing matches.
-- WITH CHECK is unchanged (it runs once per written row either way).
CREATE OR REPLACE FUNCTION app_enable_tenant_rls(tbl regclass, col text DEFAULT 'org_id') RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s TO platform_app USING (%I = ANY (ARRAY[app_current_org()])) WITH CHECK (%I = app_current_org())', tbl, col, col);
  EXECUTE format('CREATE POLICY owner_access ON %s TO %I USING (true) WITH CHECK (true)', tbl, current_user);
END $$;

DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT schemaname, tablename, substring(qual FROM '^\((\w+) = app_current_org\(\)\)$') AS col
             FROM pg_policies WHERE policyname = 'tenant_isolation' AND qual ~ '^\(\w+ = app_current_org\(\)\)$'
  LOOP
    EXECUTE format('ALTER POLICY tenant_isolation ON %I.%I USING (%I = ANY (ARRAY[app_current_org()]))', r.schemaname, r.tablename, r.col);
  END LOOP;
END $$;
