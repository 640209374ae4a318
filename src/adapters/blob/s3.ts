import { createHash, createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobObject, BlobStore } from './port.js';
import { AppError } from '../../core/errors.js';
import { fetchFailureCode } from '../../core/net/fetch-failure.js';

export interface S3Options {
  endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string; region?: string;
  /** How long a request may take until the store's answer starts (a download's body then streams without limit). */
  timeoutMs?: number;
}

/** The slowest upload rate a PUT is given time for (on top of the timeout). */
const UPLOAD_BYTES_PER_SECOND = 256 * 1024;

/**
 * Why a request to the store failed, for the operator's log line only: the request's method, the store's status and
 * S3 error code (SignatureDoesNotMatch, NoSuchBucket), or the network error's code (ECONNREFUSED, TIMEOUT). Never the
 * URL (a signed request's) nor the keys.
 */
export interface S3Cause { method: string; status?: number; code: string }

/** Any failure of the store is 503 (spec 7: a dependency unavailable), never a 500, and says what to retry; the cause goes to the log. */
const unavailable = (what: string, cause: S3Cause) => new AppError('SERVICE_UNAVAILABLE', `The file store ${what}; retry later`, undefined, { cause });

/** Most bytes of an error answer read for its code: S3's are a few hundred; a proxy's error page needs no more. */
const ERROR_BODY_BYTES = 8 * 1024;

/** The S3 error code of a refusal (`<Error><Code>NoSuchBucket</Code>...`), else `HTTP_<status>`. */
async function errorCode(res: Response): Promise<string> {
  let text = '';
  const reader = res.body?.getReader();
  try {
    while (reader && text.length < ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('latin1');
    }
  } catch { /* a body cut off: the status is the cause */ }
  await reader?.cancel().catch(() => {});
  return /<Code>([A-Za-z0-9._-]{1,64})<\/Code>/.exec(text)?.[1] ?? `HTTP_${res.status}`;
}

const sha256 = (d: string | Buffer) => createHash('sha256').update(d).digest('hex');
const hmac = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
const encodeKey = (key: string) => key.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');

/** AWS Signature Version 4 headers for one request (path-style addressing, signed payload hash). */
export function signV4(o: { method: string; url: URL; headers: Record<string, string>; payloadHash: string; accessKeyId: string; secretAccessKey: string; region: string; now?: Date }): Record<string, string> {
  const now = o.now ?? new Date();
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...o.headers, host: o.url.host, 'x-amz-date': amzDate, 'x-amz-content-sha256': o.payloadHash };
  const names = Object.keys(headers).map((h) => h.toLowerCase()).sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v).trim()]));
  const canonicalHeaders = names.map((n) => `${n}:${lower[n]}\n`).join('');
  const signedHeaders = names.join(';');
  const query = [...o.url.searchParams.entries()].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).sort().join('&');
  const canonical = [o.method, o.url.pathname, query, canonicalHeaders, signedHeaders, o.payloadHash].join('\n');
  const scope = `${day}/${o.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${o.secretAccessKey}`, day), o.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', kSigning).update(toSign).digest('hex');
  return { ...headers, authorization: `AWS4-HMAC-SHA256 Credential=${o.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}` };
}

/** An S3-compatible object store (AWS S3, MinIO, R2, ...) over plain HTTP with SigV4, path-style URLs. */
export class S3BlobStore implements BlobStore {
  readonly name = 's3';
  constructor(private readonly o: S3Options) {}

  private url(key: string): URL {
    return new URL(`${this.o.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(this.o.bucket)}/${encodeKey(key)}`);
  }

  /**
   * One signed request. A 2xx answer is returned, and null for a 404 meaning the object is absent (`absentOk`; not a
   * missing bucket); any other answer or failure is thrown as `unavailable(failed ...)` with its cause.
   */
  private async send(method: string, key: string, failed: string, o: { body?: Buffer; headers?: Record<string, string>; absentOk?: boolean } = {}): Promise<Response | null> {
    const { body, headers: extra = {} } = o;
    const url = this.url(key);
    const headers = signV4({ method, url, headers: extra, payloadHash: sha256(body ?? ''), accessKeyId: this.o.accessKeyId,
      secretAccessKey: this.o.secretAccessKey, region: this.o.region ?? 'us-east-1' });
    delete headers.host;
    // A store that stops answering must not hold the request (and an upload's buffered body) for ever. The timer stops
    // once the answer starts (an error answer's body is read before), so a long download is not cut off; a store
    // answers an upload only once it has the body, so an upload also gets the time to send it at 256 KiB/s (25 MiB:
    // 100 s more).
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), (this.o.timeoutMs ?? 30_000) + Math.ceil(((body?.length ?? 0) / UPLOAD_BYTES_PER_SECOND) * 1000));
    try {
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body: body ? new Uint8Array(body) : undefined, signal: abort.signal });
      } catch (err) {
        if (abort.signal.aborted) throw unavailable('did not answer in time', { method, code: 'TIMEOUT' });
        throw unavailable('cannot be reached', { method, code: fetchFailureCode(err) });
      }
      if (res.ok) return res;
      const code = await errorCode(res);
      if (o.absentOk && res.status === 404 && code !== 'NoSuchBucket') return null;
      throw unavailable(`${failed} (S3 answered ${res.status})`, { method, status: res.status, code });
    } finally {
      clearTimeout(timer);
    }
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const res = await this.send('PUT', key, 'refused to store the file', { body: data, headers: { 'content-type': contentType } });
    await res?.body?.cancel().catch(() => {});
  }

  async get(key: string): Promise<BlobObject | null> {
    const res = await this.send('GET', key, 'could not read the file', { absentOk: true });
    if (!res) return null;
    if (!res.body) throw unavailable(`could not read the file (S3 answered ${res.status} without a body)`, { method: 'GET', status: res.status, code: 'NO_BODY' });
    return {
      body: Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
      size: Number(res.headers.get('content-length') ?? 0),
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
    };
  }

  async delete(key: string): Promise<void> {
    const res = await this.send('DELETE', key, 'could not delete the file', { absentOk: true });
    await res?.body?.cancel().catch(() => {}); // absent already: deleted
  }
}
