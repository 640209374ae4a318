import fjs from 'fast-json-stringify';
import { Type } from 'typebox';
import * as S from '/work/main/dist/areas/projects/projects.schemas.js';
import { ListEnvelope } from '/work/main/dist/core/http/envelope.js';
const schema = ListEnvelope(Type.Array(S.ProjectOut));
const stringify = fjs(JSON.parse(JSON.stringify(schema)));
const mk = (withTotal) => Array.from({ length: 50 }, (_, i) => { const r = { id: '019aa5b4-1234-7000-8000-0000000000' + String(i).padStart(2, '0'), org_id: '019aa5b4-1234-7000-8000-000000000000', name: 'Project ' + i, slug: 'project-' + i, description: i % 3 ? null : 'Description of project ' + i, prefix: null, visibility: 'private', category_id: null, owner_scope: 'organization', is_active: true, created_by_user_id: '019aa5b4-1234-7000-8000-000000000001', created_at: '2026-11-21T13:12:58.123Z', updated_at: '2026-11-21T13:12:58.123Z', archived_at: null, deleted_at: null, settings: {} }; if (withTotal) r.total = 10000; return r; });
function bench(name, f) { for (let i = 0; i < 2000; i++) f(); const t = process.hrtime.bigint(); const N = 20000; for (let i = 0; i < N; i++) f(); console.log(name, Number(process.hrtime.bigint() - t) / N / 1000, 'us'); }
bench('JSON.stringify rows', () => JSON.stringify(mk(true)));
bench('fjs envelope (rows, delete total)', () => { const rows = mk(true); for (const r of rows) delete r.total; return stringify({ success: true, data: rows, pagination: { total: 10000, limit: 50, offset: 0, has_more: true } }); });
bench('fjs envelope (rows, no delete)', () => { const rows = mk(false); return stringify({ success: true, data: rows, pagination: { total: 10000, limit: 50, offset: 0, has_more: true } }); });
bench('JSON.stringify envelope (no delete)', () => { const rows = mk(false); return JSON.stringify({ success: true, data: rows, pagination: { total: 10000, limit: 50, offset: 0, has_more: true } }); });
bench('mk only', () => mk(true));
console.log(stringify({ success: true, data: mk(false), pagination: { total: 10000, limit: 50, offset: 0, has_more: true } }).length);
