import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signV4 } from './s3.js';

/** What the server does with the next requests instead of answering them: an S3 error (InternalError unless a code is given), or no answer at all. */
export type S3Fault = { status: number; code?: string } | 'hang';

/** An error answer as S3 gives it: the code in an XML body. */
const s3Error = (res: http.ServerResponse, status: number, code: string) =>
  res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code}</Message></Error>`);

/**
 * A local S3-compatible server for tests (path-style PUT, GET, DELETE of objects), checking every request's SigV4
 * signature against `creds` (403 SignatureDoesNotMatch otherwise; errors in S3's XML). Objects are kept by their path (`/bucket/key`).
 * `fault`, while set, answers every request with it; `delayMs` holds every answer that long.
 */
export async function startS3Server(creds: { accessKeyId: string; secretAccessKey: string; region?: string }) {
  const objects = new Map<string, { body: Buffer; type: string }>();
  const state: { fault: S3Fault | null; delayMs: number } = { fault: null, delayMs: 0 };
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => setTimeout(answer, state.delayMs));
    const answer = () => {
      if (state.fault === 'hang') { hanging.add(res); return; }
      if (state.fault) { s3Error(res, state.fault.status, state.fault.code ?? 'InternalError'); return; }
      const body = Buffer.concat(chunks);
      // Recompute the signature over what arrived.
      const signed = String(req.headers.authorization ?? '').match(/SignedHeaders=([^,]+)/)?.[1]?.split(';') ?? [];
      const headers = Object.fromEntries(signed.filter((n) => !['host', 'x-amz-date', 'x-amz-content-sha256'].includes(n)).map((n) => [n, String(req.headers[n])]));
      const expected = signV4({ method: req.method!, url: new URL(`http://${req.headers.host}${req.url}`), headers, payloadHash: String(req.headers['x-amz-content-sha256']),
        ...creds, region: creds.region ?? 'us-east-1', now: new Date(String(req.headers['x-amz-date']).replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')) });
      if (expected.authorization !== req.headers.authorization) { s3Error(res, 403, 'SignatureDoesNotMatch'); return; }
      const key = req.url!;
      if (req.method === 'PUT') { objects.set(key, { body, type: String(req.headers['content-type']) }); res.writeHead(200).end(); return; }
      if (req.method === 'DELETE') { objects.delete(key); res.writeHead(204).end(); return; }
      const o = objects.get(key);
      if (!o) { s3Error(res, 404, 'NoSuchKey'); return; }
      res.writeHead(200, { 'content-type': o.type, 'content-length': o.body.length }).end(o.body);
    };
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint, objects, state,
    close: () => new Promise<void>((r) => { for (const h of hanging) h.destroy(); server.closeAllConnections(); server.close(() => r()); }),
  };
}
