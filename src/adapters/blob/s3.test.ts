import { describe, expect, it } from 'vitest';
import { S3BlobStore, signV4 } from './s3.js';
import { startS3Server } from './test-server.js';

describe('S3 SigV4', () => {
  it('matches the AWS documentation example (GET object with Range)', () => {
    const h = signV4({
      method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), headers: { range: 'bytes=0-9' },
      payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1',
      now: new Date('2013-05-24T00:00:00Z'),
    });
    expect(h.authorization).toBe('AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
  });

  it('puts, gets and deletes against a local S3-compatible server that checks signatures', async () => {
    const creds = { accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' };
    const srv = await startS3Server(creds);
    try {
      const store = new S3BlobStore({ endpoint: srv.endpoint, bucket: 'docs', ...creds });
      await store.put('org/documents/a b.pdf', Buffer.from('%PDF-1.4 hello'), 'application/pdf');
      expect([...srv.objects.keys()]).toEqual(['/docs/org/documents/a%20b.pdf']);
      const got = await store.get('org/documents/a b.pdf');
      const chunks: Buffer[] = [];
      for await (const c of got!.body) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('%PDF-1.4 hello');
      expect(got!.contentType).toBe('application/pdf');
      expect(await store.get('missing')).toBeNull();
      await store.delete('org/documents/a b.pdf');
      expect(srv.objects.size).toBe(0);
      const wrong = new S3BlobStore({ endpoint: srv.endpoint, bucket: 'docs', accessKeyId: 'LOCALKEY', secretAccessKey: 'bad' });
      await expect(wrong.put('x', Buffer.from('y'), 'text/plain')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('S3 answered 403') });
    } finally { await srv.close(); }
  });

  it('a store that fails, hangs or is gone is 503 SERVICE_UNAVAILABLE, never a 500', async () => {
    const creds = { accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' };
    const srv = await startS3Server(creds);
    const store = new S3BlobStore({ endpoint: srv.endpoint, bucket: 'docs', ...creds, timeoutMs: 200 });
    try {
      srv.state.fault = { status: 500 };
      for (const call of [() => store.put('k', Buffer.from('y'), 'text/plain'), () => store.get('k'), () => store.delete('k')]) {
        await expect(call()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('S3 answered 500') });
      }
      srv.state.fault = null;
      // An upload gets time to send its body (256 KiB/s on top of the timeout); a download's answer does not wait.
      srv.state.delayMs = 600;
      await store.put('big', Buffer.alloc(256 * 1024, 1), 'application/octet-stream');
      await expect(store.get('big')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The file store did not answer in time; retry later' });
      srv.state.delayMs = 0;
      srv.state.fault = 'hang';
      const started = Date.now();
      await expect(store.get('k')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The file store did not answer in time; retry later' });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally { await srv.close(); }
    await expect(store.put('k', Buffer.from('y'), 'text/plain')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The file store cannot be reached; retry later' });
  });

  it('a failure carries its cause for the log: the S3 error code from the XML body, the status, or the network error code', async () => {
    const creds = { accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' };
    const srv = await startS3Server(creds);
    const store = new S3BlobStore({ endpoint: srv.endpoint, bucket: 'docs', ...creds, timeoutMs: 200 });
    const causeOf = (p: Promise<unknown>) => p.then(() => { throw new Error('did not fail'); }, (err: { code?: string; cause?: unknown }) => {
      expect(err.code).toBe('SERVICE_UNAVAILABLE');
      return err.cause;
    });
    try {
      const wrong = new S3BlobStore({ endpoint: srv.endpoint, bucket: 'docs', accessKeyId: 'LOCALKEY', secretAccessKey: 'bad' });
      expect(await causeOf(wrong.put('k', Buffer.from('y'), 'text/plain'))).toEqual({ method: 'PUT', status: 403, code: 'SignatureDoesNotMatch' });
      // A missing bucket is a fault of the set-up, not an absent file: a read fails rather than finding nothing.
      srv.state.fault = { status: 404, code: 'NoSuchBucket' };
      expect(await causeOf(store.get('k'))).toEqual({ method: 'GET', status: 404, code: 'NoSuchBucket' });
      expect(await causeOf(store.delete('k'))).toEqual({ method: 'DELETE', status: 404, code: 'NoSuchBucket' });
      srv.state.fault = { status: 502 };
      expect(await causeOf(store.get('k'))).toEqual({ method: 'GET', status: 502, code: 'InternalError' });
      srv.state.fault = 'hang';
      expect(await causeOf(store.get('k'))).toEqual({ method: 'GET', code: 'TIMEOUT' });
      srv.state.fault = null;
      expect(await store.get('absent')).toBeNull(); // NoSuchKey: absent
    } finally { await srv.close(); }
    // A port nobody listens on any more (never connected to, so no pooled connection is tried first).
    const gone = await startS3Server(creds);
    await gone.close();
    const refused = new S3BlobStore({ endpoint: gone.endpoint, bucket: 'docs', ...creds });
    expect(await causeOf(refused.put('k', Buffer.from('y'), 'text/plain'))).toEqual({ method: 'PUT', code: 'ECONNREFUSED' });
  });
});
