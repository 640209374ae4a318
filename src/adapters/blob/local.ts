import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, rmdir, stat, writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BlobObject, BlobStore } from './port.js';

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,500}$/;

/** Files under DATA_DIR/blobs; writes go to a temporary file renamed into place, so readers never see half a file. */
export class LocalBlobStore implements BlobStore {
  readonly name = 'local';
  private readonly root: string;
  constructor(root: string) { this.root = path.resolve(root); }

  private file(key: string): string {
    if (!KEY_RE.test(key) || key.split('/').some((s) => s === '..' || s === '.')) throw new Error(`invalid blob key ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const f = this.file(key);
    const tmp = `${f}.${randomBytes(6).toString('hex')}.tmp`;
    // Made again if a delete in the same directory removed it, empty, between the mkdir and the write (see delete).
    for (let tries = 1; ; tries++) {
      await mkdir(path.dirname(f), { recursive: true });
      try {
        await writeFile(tmp, data);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || tries === 3) throw err;
      }
    }
    await writeFile(`${f}.type`, contentType);
    await rename(tmp, f);
  }

  async get(key: string): Promise<BlobObject | null> {
    const f = this.file(key);
    try {
      const st = await stat(f);
      const contentType = await readFile(`${f}.type`, 'utf8').catch(() => 'application/octet-stream');
      return { body: createReadStream(f), size: st.size, contentType };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const f = this.file(key);
    await rm(f, { force: true });
    await rm(`${f}.type`, { force: true });
    // Its directory goes with its last file, and so do the parents it leaves empty (each deleted document left one
    // empty directory behind). rmdir refuses a directory that is not empty: there the walk stops.
    for (let dir = path.dirname(f); dir.startsWith(this.root + path.sep); dir = path.dirname(dir)) {
      try { await rmdir(dir); } catch { break; }
    }
  }
}
