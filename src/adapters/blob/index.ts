import path from 'node:path';
import type { BlobStore } from './port.js';
import { LocalBlobStore } from './local.js';
import { S3BlobStore } from './s3.js';

export type { BlobStore, BlobObject } from './port.js';

/**
 * S3-compatible storage when S3_ENDPOINT, S3_BUCKET and both S3 keys are set; else DATA_DIR/blobs on local disk.
 * loadConfig refuses a part of them at start, so the fallback is only ever "none set".
 */
export function blobStoreFromEnv(dataDir: string, env: NodeJS.ProcessEnv = process.env): BlobStore {
  if (env.S3_ENDPOINT && env.S3_BUCKET && env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY) {
    return new S3BlobStore({ endpoint: env.S3_ENDPOINT, bucket: env.S3_BUCKET, accessKeyId: env.S3_ACCESS_KEY_ID,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY, region: env.S3_REGION || 'us-east-1' });
  }
  return new LocalBlobStore(path.join(dataDir, 'blobs'));
}
