-- documents_search_top() (migration 0051) with the matches collected first, whatever the sort. Before, a search
-- sorted by a column could be planned as a walk of that column's index (documents_org_updated, ...) testing every
-- document of the organization against the query: PostgreSQL costs the walk as if LIMIT could stop it early, but
-- count(*) OVER () needs every match, so the walk always went to the end of the index: 110-145 ms for any word,
-- whether it matched 639 documents or 59,608 (PostgreSQL 15, 100,000 documents; `docs/benchmarks.md`). Now the
-- matches come from a MATERIALIZED CTE, planned alone (the GIN index for narrow words, a scan for broad ones),
-- counted once by a scalar subquery (no window buffering every match, no full sort under the LIMIT: a top-N sort
-- keeps only the rows returned), and only the rows kept are ranked when the sort is not relevance.
CREATE OR REPLACE FUNCTION documents_search_top(q tsquery, p_project uuid, p_parent uuid, p_kind text, p_sort text, p_desc boolean, p_depth integer)
  RETURNS TABLE (match_id uuid, match_rank real, total bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
AS $$
DECLARE
  -- The organization as a parameter ($6): app_current_org() in the statement would be evaluated for every match.
  org constant uuid := app_current_org();
  matches constant text := 'FROM documents d WHERE d.search @@ $1 AND d.org_id = $6 AND d.search IS NOT NULL
    AND ($2 IS NULL OR d.project_id = $2) AND ($3 IS NULL OR d.parent_id = $3) AND ($4 IS NULL OR d.kind = $4)';
  dir constant text := CASE WHEN p_desc THEN 'DESC' ELSE 'ASC' END;
  sort_key constant text := CASE p_sort WHEN 'updated_at' THEN 'd.updated_at' WHEN 'created_at' THEN 'd.created_at' WHEN 'title' THEN 'lower(d.title)' END;
BEGIN
  IF p_sort = 'relevance' THEN
    RETURN QUERY EXECUTE format('WITH m AS MATERIALIZED (SELECT d.id, ts_rank(d.search, $1) AS rank, d.updated_at %1$s)
      SELECT m.id, m.rank, (SELECT count(*) FROM m) FROM m ORDER BY m.rank %2$s, m.updated_at %2$s, m.id %2$s LIMIT $5', matches, dir)
      USING q, p_project, p_parent, p_kind, p_depth, org;
  ELSIF sort_key IS NOT NULL THEN
    RETURN QUERY EXECUTE format('WITH m AS MATERIALIZED (SELECT d.id, %1$s AS sort_key %2$s),
        top AS (SELECT m.id, m.sort_key FROM m ORDER BY m.sort_key %3$s, m.id %3$s LIMIT $5)
      SELECT top.id, ts_rank(d.search, $1), (SELECT count(*) FROM m) FROM top JOIN documents d ON d.org_id = $6 AND d.id = top.id
      ORDER BY top.sort_key %3$s, top.id %3$s', sort_key, matches, dir)
      USING q, p_project, p_parent, p_kind, p_depth, org;
  ELSE
    RAISE EXCEPTION 'documents_search_top: unknown sort %', p_sort USING ERRCODE = 'invalid_parameter_value';
  END IF;
END $$;
