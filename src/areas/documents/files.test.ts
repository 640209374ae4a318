import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { appWithCapturedLogs, buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';
import { documentsDeps, setDocumentsDeps } from './deps.js';
import { S3BlobStore } from '../../adapters/blob/s3.js';
import { startS3Server } from '../../adapters/blob/test-server.js';
import { HostedModeration } from '../../adapters/moderation/openai.js';
import { startModerationServer } from '../../adapters/moderation/test-server.js';
import { LocalModeration } from '../../adapters/moderation/local.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200_000, 7), Buffer.from('\n%%EOF\n')]);

beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  b = await newTenant(t.app);
});
afterAll(async () => { await t?.close(); });

const newDoc = async (who: Tenant) => (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'With file' } })).json().data.id as string;
const upload = (who: Tenant, id: string, body: Buffer, type = 'application/pdf') =>
  t.app.inject({ method: 'PUT', url: `/v1/documents/${id}/file`, headers: { ...who.auth, 'content-type': type }, payload: body });

describe('document files', () => {
  it('uploads a PDF, downloads it with bearer auth, and validates uploads', async () => {
    const id = await newDoc(a);
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth }), 404, 'NOT_FOUND');
    const up = await upload(a, id, PDF);
    expect(up.statusCode).toBe(200);
    expect(up.json().data).toEqual({ id, file_url: `/v1/documents/${id}/file`, file_size: PDF.length, content_type: 'application/pdf' });
    const doc = (await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data;
    expect(doc).toMatchObject({ file_url: `/v1/documents/${id}/file`, file_size: PDF.length });
    const dl = await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth });
    expect(dl.statusCode).toBe(200);
    expect(dl.headers['content-type']).toBe('application/pdf');
    expect(dl.headers['cache-control']).toContain('no-store');
    expect(dl.rawPayload.equals(PDF)).toBe(true);
    expect(dl.headers['content-disposition']).toBe(`inline; filename="With file.pdf"; filename*=UTF-8''With%20file.pdf`);
    // A title in any script keeps its name (RFC 5987 filename*); the ASCII fallback and unsafe characters become _.
    expect(await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { title: 'Отчёт "Q3" (final): a/b' } })).toMatchObject({ statusCode: 200 });
    expect((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth })).headers['content-disposition'])
      .toBe(`inline; filename="_____ _Q3_ (final)_ a_b.pdf"; filename*=UTF-8''%D0%9E%D1%82%D1%87%D1%91%D1%82%20_Q3_%20%28final%29_%20a_b.pdf`);
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file` }), 401, 'AUTH_REQUIRED');
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: b.auth }), 404, 'NOT_FOUND');
    errorOf(await upload(b, id, PDF), 404, 'NOT_FOUND');
    errorOf(await upload(a, id, Buffer.from('not a pdf')), 400, 'VALIDATION_ERROR');
    errorOf(await upload(a, uuidv7(), PDF), 404, 'NOT_FOUND');
    // The 415 tells what to send instead.
    expect(errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}/file`, headers: a.auth, payload: { a: 1 } }), 415, 'UNSUPPORTED_MEDIA_TYPE').message).toContain('application/pdf');
    const text = await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}/file`, headers: { ...a.auth, 'content-type': 'text/plain' }, payload: 'hello' });
    expect(errorOf(text, 415, 'UNSUPPORTED_MEDIA_TYPE').message).toBe('Content-Type "text/plain" is not accepted here; send application/pdf or application/octet-stream');
    // application/octet-stream is the other media type the upload takes (as the OpenAPI document says).
    expect((await upload(a, id, PDF, 'application/octet-stream')).json().data).toEqual({ id, file_url: `/v1/documents/${id}/file`, file_size: PDF.length, content_type: 'application/pdf' });
    errorOf(await upload(a, id, Buffer.alloc(25 * 1024 * 1024 + 1, 1)), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('signed URLs: valid, bearer ignored, expired or altered 401', async () => {
    const id = await newDoc(a);
    await upload(a, id, PDF);
    const s = await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: a.auth, payload: { expires_in: 120 } });
    expect(s.statusCode).toBe(200);
    const { url, expires_at } = s.json().data;
    expect(Date.parse(expires_at) - Date.now()).toBeGreaterThan(100_000);
    const ok = await t.app.inject({ method: 'GET', url });
    expect(ok.statusCode).toBe(200);
    expect(ok.rawPayload.equals(PDF)).toBe(true);
    // A bad bearer header is ignored when signed parameters are present.
    expect((await t.app.inject({ method: 'GET', url, headers: { authorization: 'Bearer garbage' } })).statusCode).toBe(200);
    const u = new URL(url, 'http://x');
    const q = Object.fromEntries(u.searchParams);
    const tamper = (patch: Record<string, string>) => `${u.pathname}?${new URLSearchParams({ ...q, ...patch })}`;
    errorOf(await t.app.inject({ method: 'GET', url: tamper({ exp: String(Number(q.exp) + 10) }) }), 401, 'UNAUTHORIZED');
    errorOf(await t.app.inject({ method: 'GET', url: tamper({ org: b.orgId }) }), 401, 'UNAUTHORIZED');
    errorOf(await t.app.inject({ method: 'GET', url: tamper({ sig: q.sig.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) }) }), 401, 'UNAUTHORIZED');
    errorOf(await t.app.inject({ method: 'GET', url: `${u.pathname}?org=${q.org}&exp=${q.exp}`, headers: a.auth }), 401, 'UNAUTHORIZED');
    // However long, malformed or repeated the altered values are, the answer is 401 UNAUTHORIZED, never a 400.
    errorOf(await t.app.inject({ method: 'GET', url: tamper({ sig: q.sig + 'f'.repeat(200) }) }), 401, 'UNAUTHORIZED');
    errorOf(await t.app.inject({ method: 'GET', url: tamper({ exp: '9'.repeat(40) }) }), 401, 'UNAUTHORIZED');
    errorOf(await t.app.inject({ method: 'GET', url: tamper({ org: 'x'.repeat(100) }) }), 401, 'UNAUTHORIZED');
    // A repeated one too (the schema takes it as an array; the document shows one value): the wrong signature's answer.
    const repeated = errorOf(await t.app.inject({ method: 'GET', url: `${tamper({})}&sig=${q.sig}` }), 401, 'UNAUTHORIZED');
    expect(repeated.message).toBe('The signed URL is invalid: its org, exp or sig was altered or it was not issued here');
    // Signed for another document id.
    const other = await newDoc(a);
    await upload(a, other, PDF);
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${other}/file?${u.searchParams}` }), 401, 'UNAUTHORIZED');
    // Expired: sign with a past exp through the service's own signer.
    const { signFile } = await import('./files.service.js');
    const { documentsDeps } = await import('./deps.js');
    const past = Math.floor(Date.now() / 1000) - 5;
    const sig = signFile(documentsDeps(t.platform).urlSecret, a.orgId, id, past);
    const expired = errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file?org=${a.orgId}&exp=${past}&sig=${sig}` }), 401, 'UNAUTHORIZED');
    // The message tells an expired link (whose signature holds) from an altered one, and says how to get a new one.
    expect(expired.message).toBe(`The signed URL expired at ${new Date(past * 1000).toISOString()}; issue a new one with POST /v1/documents/${id}/file/signed-url`);
    // A forged URL with a past exp is "invalid", not "expired": the message says nothing of a signature that fails.
    expect(errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file?org=${a.orgId}&exp=${past}&sig=${'0'.repeat(64)}` }), 401, 'UNAUTHORIZED').message)
      .toMatch(/^The signed URL is invalid/);
    errorOf(await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: b.auth }), 404, 'NOT_FOUND');
    errorOf(await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: a.auth, payload: { expires_in: 5 } }), 400, 'VALIDATION_ERROR');
  });

  it('signed URLs accept only the spelling the signing route issues: altered case, padding or sign is 401 UNAUTHORIZED', async () => {
    const id = await newDoc(a);
    await upload(a, id, PDF);
    const { url } = (await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: a.auth })).json().data;
    const u = new URL(url, 'http://x');
    const q = Object.fromEntries(u.searchParams) as { org: string; exp: string; sig: string };
    // The issued spelling: lower-case UUID, decimal exp without padding, 64 lower-case hex digits.
    expect(q.org).toBe(a.orgId.toLowerCase());
    expect(q.exp).toMatch(/^[1-9][0-9]*$/);
    expect(q.sig).toMatch(/^[0-9a-f]{64}$/);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    const go = (patch: Record<string, string>) => t.app.inject({ method: 'GET', url: `${u.pathname}?${new URLSearchParams({ ...q, ...patch })}` });
    const wrong = errorOf(await go({ sig: q.sig.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) }), 401, 'UNAUTHORIZED');
    const altered: Array<Record<string, string>> = [
      { sig: q.sig.toUpperCase() }, { sig: q.sig.replace(/[a-f]/, (c) => c.toUpperCase()) }, { sig: ` ${q.sig}` }, { sig: q.sig.slice(0, 63) },
      { org: q.org.toUpperCase() }, { org: `{${q.org}}` }, { org: q.org.replace(/-/g, '') },
      { exp: `0${q.exp}` }, { exp: `00${q.exp}` }, { exp: `+${q.exp}` }, { exp: `${q.exp}.0` }, { exp: ` ${q.exp}` }, { exp: `${q.exp} ` }, { exp: '' },
      { exp: `0x${Number(q.exp).toString(16)}` }, { exp: `${Number(q.exp) / 1000}e3` },
    ];
    for (const patch of altered) {
      const e = errorOf(await go(patch), 401, 'UNAUTHORIZED');
      expect(e).toEqual(wrong);
    }
    // The canonical link still works afterwards.
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
  });

  it('a deleted file is 404 with details.code FILE_DELETED, also for signed links', async () => {
    const id = await newDoc(a);
    await upload(a, id, PDF);
    const { url } = (await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: a.auth })).json().data;
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/documents/${id}/file`, headers: a.auth });
    expect(del.json().data).toEqual({ id, deleted: true });
    expect(errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth }), 404, 'NOT_FOUND').details?.code).toBe('FILE_DELETED');
    expect(errorOf(await t.app.inject({ method: 'GET', url }), 404, 'NOT_FOUND').details?.code).toBe('FILE_DELETED');
    expect(errorOf(await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: a.auth }), 404, 'NOT_FOUND').details?.code).toBe('FILE_DELETED');
    expect((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.file_url).toBeNull();
    // Uploading again restores it.
    await upload(a, id, PDF);
    expect((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth })).statusCode).toBe(200);
  });

  it('a signed link ends with its organization and pauses while the documents feature is off', async () => {
    const c = await newTenant(t.app);
    const id = await newDoc(c);
    await upload(c, id, PDF);
    const { url } = (await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: c.auth })).json().data;
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    await t.platform.db.sys.exec(`UPDATE organizations SET features = array_remove(features, 'documents') WHERE id = $1`, [c.orgId]);
    errorOf(await t.app.inject({ method: 'GET', url }), 403, 'FEATURE_DISABLED');
    await t.platform.db.sys.exec(`UPDATE organizations SET features = array_append(features, 'documents') WHERE id = $1`, [c.orgId]);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/admin/organizations/${c.orgId}`, headers: { authorization: `Bearer ${t.rootKey}` } })).statusCode).toBe(200);
    errorOf(await t.app.inject({ method: 'GET', url }), 404, 'NOT_FOUND');
  });

  it('deleting the document deletes its file: FILE_DELETED for bearer and signed links; other organizations see a plain 404', async () => {
    const id = await newDoc(a);
    await upload(a, id, PDF);
    const { url } = (await t.app.inject({ method: 'POST', url: `/v1/documents/${id}/file/signed-url`, headers: a.auth })).json().data;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/documents/${id}`, headers: a.auth })).statusCode).toBe(200);
    const bearer = errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth }), 404, 'NOT_FOUND');
    expect(bearer.details).toMatchObject({ code: 'FILE_DELETED' });
    expect(errorOf(await t.app.inject({ method: 'GET', url }), 404, 'NOT_FOUND').details).toMatchObject({ code: 'FILE_DELETED' });
    const foreign = errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: b.auth }), 404, 'NOT_FOUND');
    const random = errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${uuidv7()}/file`, headers: b.auth }), 404, 'NOT_FOUND');
    expect(foreign).toEqual(random);
    expect(foreign.details).toBeUndefined();
  });
});

describe('file storage quota', () => {
  it('an organization stores at most FILE_STORAGE_QUOTA_BYTES of files: past it 413 STORAGE_QUOTA_EXCEEDED, under concurrent uploads too; replacing, deleting and other organizations as expected', async () => {
    const q = await buildTestApp({ fileStorageQuotaBytes: 3000 });
    try {
      const c = await newTenant(q.app);
      const d = await newTenant(q.app);
      const pdf = (n: number) => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(n - 9, 7)]);
      const doc = async (who: Tenant) => (await q.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'f' } })).json().data.id as string;
      const put = (who: Tenant, id: string, body: Buffer) =>
        q.app.inject({ method: 'PUT', url: `/v1/documents/${id}/file`, headers: { ...who.auth, 'content-type': 'application/pdf' }, payload: body });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await doc(c));
      // Six uploads of 1,000 bytes at once into 3,000 bytes: exactly three are kept.
      const answers = await Promise.all(ids.map((id) => put(c, id, pdf(1000))));
      const kept = ids.filter((_, i) => answers[i].statusCode === 200);
      expect(kept).toHaveLength(3);
      const refused = answers.filter((r) => r.statusCode !== 200);
      expect(refused).toHaveLength(3);
      const over = { code: 'STORAGE_QUOTA_EXCEEDED', maxBytes: 3000, limit: 3000, used: 3000, size: 1000 };
      for (const r of refused) expect(errorOf(r, 413, 'PAYLOAD_TOO_LARGE').details).toEqual(over);
      const sizes = await q.platform.db.sys.query<{ n: number }>(`SELECT COALESCE(sum(file_size), 0)::bigint AS n FROM documents WHERE org_id = $1 AND file_key IS NOT NULL`, [c.orgId]);
      expect(sizes[0].n).toBe(3000);
      const spare = ids.find((id) => !kept.includes(id))!;
      // Replacing a file counts the new size, not both: same size fits, one byte more does not.
      expect((await put(c, kept[0], pdf(1000))).statusCode).toBe(200);
      expect(errorOf(await put(c, kept[0], pdf(1001)), 413, 'PAYLOAD_TOO_LARGE').details).toEqual({ ...over, used: 2000, size: 1001 });
      // Another organization has its own quota.
      expect((await put(d, await doc(d), pdf(3000))).statusCode).toBe(200);
      // Deleting a file, or its document, frees its bytes.
      expect((await q.app.inject({ method: 'DELETE', url: `/v1/documents/${kept[1]}/file`, headers: c.auth })).statusCode).toBe(200);
      expect((await put(c, spare, pdf(1000))).statusCode).toBe(200);
      expect((await q.app.inject({ method: 'DELETE', url: `/v1/documents/${kept[2]}`, headers: c.auth })).statusCode).toBe(200);
      expect((await put(c, kept[1], pdf(1000))).statusCode).toBe(200);
    } finally { await q.close(); }
  });
});

describe('safety gate', () => {
  it('uses a hosted moderation API when configured (OpenAI protocol on a local server)', async () => {
    const srv = await startModerationServer({ apiKey: 'sk-test', flagWord: 'forbiddenword' });
    try {
      setDocumentsDeps(t.platform, { moderation: new HostedModeration({ baseUrl: srv.url, apiKey: 'sk-test' }) });
      const bad = await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'x', content: 'a ForbiddenWord b' } });
      expect(errorOf(bad, 422, 'CONTENT_POLICY_VIOLATION').details?.categories).toEqual(['harassment']);
      const good = await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'x', content: 'fine' } });
      expect(good.statusCode).toBe(201);
      expect(srv.requests.at(-1)).toEqual({ auth: 'Bearer sk-test', body: { input: ['x', 'fine'] } });
      setDocumentsDeps(t.platform, { moderation: new HostedModeration({ baseUrl: srv.url, apiKey: 'wrong' }) });
      errorOf(await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'x' } }), 503, 'SERVICE_UNAVAILABLE');
    } finally {
      setDocumentsDeps(t.platform, { moderation: new LocalModeration(['x-content-policy-test-violation']) });
      await srv.close();
    }
  });

  it('local rules: phrases as whole words, regular expressions', async () => {
    const m = new LocalModeration(['bad phrase', 're:\\bfoo\\d+\\b', '# comment']);
    expect((await m.check(['a BAD   phrase here'])).flagged).toBe(true);
    expect((await m.check(['badphrase'])).flagged).toBe(false);
    expect(await m.check(['x foo12 y'])).toEqual({ flagged: true, categories: ['re:\\bfoo\\d+\\b'] });
    expect((await m.check(['nothing'])).flagged).toBe(false);
  });
});

describe('files on an S3-compatible store (S3_ENDPOINT)', () => {
  it('uploads, downloads and deletes through S3; a failing or missing object is 503 and a failed upload stores nothing', async () => {
    const creds = { accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' };
    const srv = await startS3Server(creds);
    const local = documentsDeps(t.platform).blobs;
    try {
      setDocumentsDeps(t.platform, { blobs: new S3BlobStore({ endpoint: srv.endpoint, bucket: 'platform', ...creds, timeoutMs: 500 }) });
      const id = await newDoc(a);
      expect((await upload(a, id, PDF)).statusCode).toBe(200);
      const [key] = [...srv.objects.keys()];
      expect(key).toMatch(new RegExp(`^/platform/${a.orgId}/documents/${id}/[0-9a-f-]+\\.pdf$`));
      const dl = await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth });
      expect(dl.statusCode).toBe(200);
      expect(dl.rawPayload.equals(PDF)).toBe(true);

      srv.state.fault = { status: 500 };
      errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth }), 503, 'SERVICE_UNAVAILABLE');
      const other = await newDoc(a);
      errorOf(await upload(a, other, PDF), 503, 'SERVICE_UNAVAILABLE');
      srv.state.fault = null;
      expect((await t.app.inject({ method: 'GET', url: `/v1/documents/${other}`, headers: a.auth })).json().data.file_url).toBeNull();
      errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${other}/file`, headers: a.auth }), 404, 'NOT_FOUND');

      // The row says there is a file, the store has lost it: 503 (retry), not a 404 that would say it never existed.
      srv.objects.clear();
      const logged = vi.spyOn(t.platform.log, 'error');
      try {
        errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}/file`, headers: a.auth }), 503, 'SERVICE_UNAVAILABLE');
        // The operator hears of it (files not restored with the database, README "Backups").
        expect(logged).toHaveBeenCalledWith({ orgId: a.orgId, documentId: id, key: key.replace('/platform/', ''), store: 's3' }, 'document file missing from the file store');
      } finally {
        logged.mockRestore();
      }
      expect((await upload(a, id, PDF)).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'DELETE', url: `/v1/documents/${id}/file`, headers: a.auth })).json().data).toEqual({ id, deleted: true });
      expect(srv.objects.size).toBe(0);
    } finally {
      setDocumentsDeps(t.platform, { blobs: local });
      await srv.close();
    }
  });

  it('a file the store cannot remove (file deleted, document deleted) does not fail the request; a warning names its key and the cause', async () => {
    const creds = { accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' };
    const srv = await startS3Server(creds);
    const local = documentsDeps(t.platform).blobs;
    const warned = vi.spyOn(t.platform.log, 'warn');
    try {
      setDocumentsDeps(t.platform, { blobs: new S3BlobStore({ endpoint: srv.endpoint, bucket: 'platform', ...creds, timeoutMs: 500 }) });
      for (const route of ['file', 'document'] as const) {
        const id = await newDoc(a);
        expect((await upload(a, id, PDF)).statusCode).toBe(200);
        const key = [...srv.objects.keys()].find((k) => k.includes(id))!.replace('/platform/', '');
        srv.state.fault = { status: 500 };
        const res = await t.app.inject({ method: 'DELETE', url: route === 'file' ? `/v1/documents/${id}/file` : `/v1/documents/${id}`, headers: a.auth });
        srv.state.fault = null;
        expect(res.statusCode, route).toBe(200);
        expect(warned).toHaveBeenCalledWith({ key, reason: expect.stringContaining('could not delete the file'), cause: { method: 'DELETE', status: 500, code: 'InternalError' } },
          'a stored file could not be removed; it is left in the file store');
      }
    } finally {
      warned.mockRestore();
      setDocumentsDeps(t.platform, { blobs: local });
      await srv.close();
    }
  });

  it('a failing store is logged with its cause (the S3 error code, the network error), never the keys or the signed request; the client gets 503', async () => {
    const srv = await startS3Server({ accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' });
    const gone = await startS3Server({ accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' });
    await gone.close(); // a port nobody listens on
    const { app, lines } = await appWithCapturedLogs(t);
    const store = (endpoint: string) => new S3BlobStore({ endpoint, bucket: 'platform', accessKeyId: 'LOCALKEY', secretAccessKey: 'wrong-secret', timeoutMs: 500 });
    const failedUpload = async () => {
      const res = await app.inject({ method: 'PUT', url: `/v1/documents/${await newDoc(a)}/file`, headers: { ...a.auth, 'content-type': 'application/pdf' }, payload: PDF });
      errorOf(res, 503, 'SERVICE_UNAVAILABLE');
      const failed = lines.filter((l) => l.msg === 'request failed' && l.reqId === res.headers['x-request-id']);
      expect(failed, JSON.stringify(lines)).toHaveLength(1);
      return failed[0].err;
    };
    try {
      await app.ready();
      setDocumentsDeps(app.platform, { blobs: store(srv.endpoint) });
      expect(await failedUpload()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause: { method: 'PUT', status: 403, code: 'SignatureDoesNotMatch' } });
      setDocumentsDeps(app.platform, { blobs: store(gone.endpoint) });
      expect(await failedUpload()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause: { method: 'PUT', code: 'ECONNREFUSED' } });
      const logged = JSON.stringify(lines);
      for (const secret of ['wrong-secret', 'LOCALKEY', 'Signature=', 'AWS4-HMAC-SHA256', srv.endpoint]) expect(logged).not.toContain(secret);
    } finally {
      await app.close();
      await srv.close();
    }
  });
});
