import pg from 'pg';
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'shi', 'vo', 'ber', 'dan', 'el', 'fin', 'gor', 'hal', 'ost', 'jun', 'kel', 'mar', 'nor', 'pel'];
const V = []; for (const a of SYLLABLES) for (const b of SYLLABLES) for (const c of SYLLABLES) if (V.length < 5000) V.push(a + b + c);
const c = new pg.Client({ connectionString: process.argv[2] }); await c.connect();
for (let d = 0; d < 100000; d += 20000) await c.query(`INSERT INTO documents (org_id, id, title, content, content_type, language, search, is_indexed, indexed_at)
      SELECT $1, app_uuidv7(), d.title, d.content, 'markdown', 'english',
        setweight(to_tsvector('english'::regconfig, d.title), 'A') || setweight(to_tsvector('english'::regconfig, d.content), 'B'), true, now()
      FROM (SELECT g, (SELECT string_agg(($2::text[])[1 + floor(5000 * random() ^ 2)::int], ' ') FROM generate_series(1, 4 + 0 * g)) AS title,
              (SELECT string_agg(($2::text[])[1 + floor(5000 * random() ^ 2)::int], ' ') FROM generate_series(1, 60 + 0 * g)) AS content
            FROM generate_series(1, 20000) g) d`, [process.argv[3], V]);
await c.query('VACUUM ANALYZE documents');
const terms = Array.from({ length: 100 }, (_, i) => V[(i * 2654435761) % V.length]);
const counts = [];
for (const t of terms) counts.push(Number((await c.query(`SELECT count(*) FROM documents WHERE org_id = $1 AND search @@ (to_tsquery('english', $2) || to_tsquery('simple', $2))`, [process.argv[3], t + ':*'])).rows[0].count));
counts.sort((a, b) => a - b);
console.log('matches per term: min', counts[0], 'median', counts[50], 'p90', counts[90], 'max', counts[99]);
console.log('terms[0]', terms[0]);
await c.end();
