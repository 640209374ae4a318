import { describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3BlobStore, signV4 } from './s3.js';

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
    const objects = new Map<string, { body: Buffer; type: string }>();
    const creds = { accessKeyId: 'LOCALKEY', secretAccessKey: 'local-secret' };
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        // Recompute the signature over what arrived.
        const signed = String(req.headers.authorization ?? '').match(/SignedHeaders=([^,]+)/)?.[1]?.split(';') ?? [];
        const headers = Object.fromEntries(signed.filter((n) => !['host', 'x-amz-date', 'x-amz-content-sha256'].includes(n)).map((n) => [n, String(req.headers[n])]));
        const expected = signV4({ method: req.method!, url: new URL(`http://${req.headers.host}${req.url}`), headers, payloadHash: String(req.headers['x-amz-content-sha256']),
          ...creds, region: 'us-east-1', now: new Date(String(req.headers['x-amz-date']).replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')) });
        if (expected.authorization !== req.headers.authorization) { res.writeHead(403).end('SignatureDoesNotMatch'); return; }
        const key = req.url!;
        if (req.method === 'PUT') { objects.set(key, { body, type: String(req.headers['content-type']) }); res.writeHead(200).end(); return; }
        if (req.method === 'DELETE') { objects.delete(key); res.writeHead(204).end(); return; }
        const o = objects.get(key);
        if (!o) { res.writeHead(404).end(); return; }
        res.writeHead(200, { 'content-type': o.type, 'content-length': o.body.length }).end(o.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const store = new S3BlobStore({ endpoint, bucket: 'docs', ...creds });
      await store.put('org/documents/a b.pdf', Buffer.from('%PDF-1.4 hello'), 'application/pdf');
      expect([...objects.keys()]).toEqual(['/docs/org/documents/a%20b.pdf']);
      const got = await store.get('org/documents/a b.pdf');
      const chunks: Buffer[] = [];
      for await (const c of got!.body) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('%PDF-1.4 hello');
      expect(got!.contentType).toBe('application/pdf');
      expect(await store.get('missing')).toBeNull();
      await store.delete('org/documents/a b.pdf');
      expect(objects.size).toBe(0);
      const wrong = new S3BlobStore({ endpoint, bucket: 'docs', accessKeyId: 'LOCALKEY', secretAccessKey: 'bad' });
      await expect(wrong.put('x', Buffer.from('y'), 'text/plain')).rejects.toThrow(/403/);
    } finally { server.close(); }
  });
});
