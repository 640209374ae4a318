-- Full-text search under row-level security: `@@` is not leakproof, so PostgreSQL refuses to use the GIN
-- index below the tenant policy and scans every document of the organization. This function runs as the
-- owner (no policy in the way, the index is used) and applies the same tenant filter itself, explicitly.
CREATE FUNCTION documents_search_matches(q tsquery)
  RETURNS TABLE (match_id uuid, match_rank real)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
AS $$
  SELECT d.id, ts_rank(d.search, q) FROM documents d
   WHERE d.search @@ q AND d.org_id = app_current_org() AND d.search IS NOT NULL
$$;
REVOKE ALL ON FUNCTION documents_search_matches(tsquery) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION documents_search_matches(tsquery) TO platform_app;
