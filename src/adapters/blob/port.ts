import type { Readable } from 'node:stream';

export interface BlobObject { body: Readable; size: number; contentType: string }

/** Where document files live: local disk by default, an S3-compatible object store when configured. */
export interface BlobStore {
  readonly name: string;
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /** null when the object does not exist. */
  get(key: string): Promise<BlobObject | null>;
  delete(key: string): Promise<void>;
}
