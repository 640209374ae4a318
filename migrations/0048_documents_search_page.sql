-- Ranked search without a second visit per match. documents_search_matches() returned (id, rank) of every
-- match and the list statement joined each one back to documents (one primary-key lookup per match, 1,600
-- lookups for a common word) before sorting and counting. This function also applies the list filters and
-- returns the sort keys, so the caller sorts, counts and pages the matches as they come out of the one scan and
-- reads only the page's rows from documents. Same tenant rule as before: it runs as the owner (so the GIN index
-- can serve `@@`, which is not leakproof and cannot pass the row policy) and filters on app_current_org() itself.
CREATE FUNCTION documents_search_candidates(q tsquery, p_project uuid, p_parent uuid, p_kind text)
  RETURNS TABLE (match_id uuid, match_rank real, match_updated_at timestamptz, match_created_at timestamptz, match_title_key text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
AS $$
  SELECT d.id, ts_rank(d.search, q), d.updated_at, d.created_at, lower(d.title) FROM documents d
   WHERE d.search @@ q AND d.org_id = app_current_org() AND d.search IS NOT NULL
     AND (p_project IS NULL OR d.project_id = p_project)
     AND (p_parent IS NULL OR d.parent_id = p_parent)
     AND (p_kind IS NULL OR d.kind = p_kind)
$$;
REVOKE ALL ON FUNCTION documents_search_candidates(tsquery, uuid, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION documents_search_candidates(tsquery, uuid, uuid, text) TO platform_app;

-- The search text parsed in the document language and in `simple` (so stemmed and exact words both match);
-- when both parse to the same query (most words), once: each OR branch costs a recheck and a rank per match.
CREATE FUNCTION app_search_query(cfg regconfig, q text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN a = b THEN a ELSE a || b END FROM (SELECT to_tsquery(cfg, q) AS a, to_tsquery('simple'::regconfig, q) AS b) x
$$;

DROP FUNCTION documents_search_matches(tsquery);
