import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from './local.js';
import { blobStoreFromEnv } from './index.js';
import { S3BlobStore } from './s3.js';
import { LocalModeration, localRulesFromEnv } from '../moderation/local.js';
import { moderationFromEnv } from '../moderation/index.js';
import { HostedModeration } from '../moderation/openai.js';

describe('local blob store', () => {
  it('puts, gets, deletes; refuses path tricks', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    try {
      const s = new LocalBlobStore(dir);
      await s.put('org/doc/a.pdf', Buffer.from('%PDF-x'), 'application/pdf');
      const got = await s.get('org/doc/a.pdf');
      const chunks: Buffer[] = [];
      for await (const c of got!.body) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('%PDF-x');
      expect(got).toMatchObject({ size: 6, contentType: 'application/pdf' });
      await s.delete('org/doc/a.pdf');
      expect(await s.get('org/doc/a.pdf')).toBeNull();
      await expect(s.put('../escape', Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid blob key/);
      await expect(s.get('a/../../b')).rejects.toThrow(/invalid blob key/);
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  it('a delete removes the directories its file leaves empty, up to the root, and no other', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    try {
      const s = new LocalBlobStore(dir);
      await s.put('org/documents/one/file.pdf', Buffer.from('1'), 'application/pdf');
      await s.put('org/documents/two/file.pdf', Buffer.from('2'), 'application/pdf');
      await s.put('org/documents/two/other.pdf', Buffer.from('3'), 'application/pdf');
      await s.delete('org/documents/one/file.pdf');
      await s.delete('org/documents/two/file.pdf');
      expect(readdirSync(path.join(dir, 'org', 'documents'))).toEqual(['two']);
      await s.delete('org/documents/two/other.pdf');
      expect([existsSync(dir), readdirSync(dir)]).toEqual([true, []]);
      await s.put('org/documents/two/again.pdf', Buffer.from('4'), 'application/pdf'); // made again
      const again = await s.get('org/documents/two/again.pdf');
      const chunks: Buffer[] = [];
      for await (const c of again!.body) chunks.push(c as Buffer); // read before the directory is removed below
      expect(Buffer.concat(chunks).toString()).toBe('4');
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  it('chooses S3 only when fully configured', () => {
    expect(blobStoreFromEnv('/tmp/x', {})).toBeInstanceOf(LocalBlobStore);
    expect(blobStoreFromEnv('/tmp/x', { S3_ENDPOINT: 'http://127.0.0.1:9', S3_BUCKET: 'b' })).toBeInstanceOf(LocalBlobStore);
    expect(blobStoreFromEnv('/tmp/x', { S3_ENDPOINT: 'http://127.0.0.1:9', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' })).toBeInstanceOf(S3BlobStore);
  });
});

describe('moderation configuration', () => {
  it('reads MODERATION_BLOCKLIST and MODERATION_BLOCKLIST_FILE; hosted when URL and key are set', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mod-'));
    try {
      const file = path.join(dir, 'rules.txt');
      writeFileSync(file, '# my rules\nfile phrase\nre:^secret-\\d+$\n');
      const m = new LocalModeration(localRulesFromEnv({ MODERATION_BLOCKLIST: 'alpha, beta gamma', MODERATION_BLOCKLIST_FILE: file }));
      for (const bad of ['say alpha now', 'Beta  Gamma', 'a FILE phrase', 'secret-42', 'x-content-policy-test-violation']) expect((await m.check([bad])).flagged, bad).toBe(true);
      for (const good of ['alphabet', 'beta', 'secret-42 b']) expect((await m.check([good])).flagged, good).toBe(false);
      expect(moderationFromEnv({})).toBeInstanceOf(LocalModeration);
      expect(moderationFromEnv({ MODERATION_API_URL: 'http://127.0.0.1:9', MODERATION_API_KEY: 'k' })).toBeInstanceOf(HostedModeration);
      await expect(new HostedModeration({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeoutMs: 500 }).check(['x'])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
