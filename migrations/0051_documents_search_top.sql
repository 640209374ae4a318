-- The first SEARCH_CACHE_DEPTH matches of a search in order, with the number of matches, from one scan, for the
-- search cache (src/areas/documents/search-cache.ts). Before: the caller sorted documents_search_candidates()
-- (migration 0048), a SQL function PostgreSQL cannot inline (SECURITY DEFINER), so every match (60,000 for a word in
-- 60% of 100,000 documents) was first stored in the function's result (spilling to disk past work_mem), then
-- buffered again by count(*) OVER (), then sorted: 157 ms for that word, 7 ms for a word in 1,600 documents. Here
-- the sort, the count and the limit run inside the function, on rows that carry only the id and the sort key, and
-- only the rows kept are returned (110 ms and 5.5 ms). A search sorted by anything but relevance ranks only the rows
-- it keeps. The statement is built from fixed fragments (no caller text in it) and planned with the query's
-- values (EXECUTE ... USING), so the planner sees how common the words are. Same tenant rule as 0045 and 0048: it
-- runs as the owner (so the GIN index can serve `@@`, which is not leakproof and cannot pass the row policy) and
-- filters on app_current_org() itself (read once, then passed to the statement as a value).
CREATE FUNCTION documents_search_top(q tsquery, p_project uuid, p_parent uuid, p_kind text, p_sort text, p_desc boolean, p_depth integer)
  RETURNS TABLE (match_id uuid, match_rank real, total bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
AS $$
DECLARE
  -- The organization as a parameter ($6): app_current_org() in the statement would be evaluated for every match
  -- (a fifth of the scan for a common word).
  org constant uuid := app_current_org();
  matches constant text := 'FROM documents d WHERE d.search @@ $1 AND d.org_id = $6 AND d.search IS NOT NULL
    AND ($2 IS NULL OR d.project_id = $2) AND ($3 IS NULL OR d.parent_id = $3) AND ($4 IS NULL OR d.kind = $4)';
  dir constant text := CASE WHEN p_desc THEN 'DESC' ELSE 'ASC' END;
  sort_key constant text := CASE p_sort WHEN 'updated_at' THEN 'd.updated_at' WHEN 'created_at' THEN 'd.created_at' WHEN 'title' THEN 'lower(d.title)' END;
BEGIN
  IF p_sort = 'relevance' THEN
    -- OFFSET 0 keeps ts_rank below the window: otherwise it is computed above it and count(*) OVER () buffers every
    -- match's whole search vector.
    RETURN QUERY EXECUTE format('SELECT m.id, m.rank, count(*) OVER () FROM (SELECT d.id, ts_rank(d.search, $1) AS rank, d.updated_at %1$s OFFSET 0) m
      ORDER BY m.rank %2$s, m.updated_at %2$s, m.id %2$s LIMIT $5', matches, dir)
      USING q, p_project, p_parent, p_kind, p_depth, org;
  ELSIF sort_key IS NOT NULL THEN
    RETURN QUERY EXECUTE format('SELECT m.id, ts_rank(d.search, $1), m.total FROM (SELECT d.id, %1$s AS sort_key, count(*) OVER () AS total %2$s
      ORDER BY sort_key %3$s, d.id %3$s LIMIT $5) m JOIN documents d ON d.org_id = $6 AND d.id = m.id
      ORDER BY m.sort_key %3$s, m.id %3$s', sort_key, matches, dir)
      USING q, p_project, p_parent, p_kind, p_depth, org;
  ELSE
    RAISE EXCEPTION 'documents_search_top: unknown sort %', p_sort USING ERRCODE = 'invalid_parameter_value';
  END IF;
END $$;
REVOKE ALL ON FUNCTION documents_search_top(tsquery, uuid, uuid, text, text, boolean, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION documents_search_top(tsquery, uuid, uuid, text, text, boolean, integer) TO platform_app;
