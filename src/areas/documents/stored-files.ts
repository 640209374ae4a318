import type { ServiceContext } from '../../core/context.js';
import { documentsDeps } from './deps.js';

/**
 * Removes a stored file the database no longer points at (replaced, deleted, or never recorded). The request has done
 * its work by then, so a failure does not fail it; it is logged with the key and the store's cause, since the object
 * is left behind in the store (an operator can remove it: nothing refers to it).
 */
export async function removeStoredFile(ctx: ServiceContext, key: string): Promise<void> {
  await documentsDeps(ctx.platform).blobs.delete(key).catch((err: Error & { cause?: unknown }) => {
    ctx.platform.log.warn({ key, reason: err.message, cause: err.cause }, 'a stored file could not be removed; it is left in the file store');
  });
}
