import { createHmac } from 'node:crypto';
import type { Platform } from '../../core/context.js';
import { moderationFromEnv, type ModerationPort } from '../../adapters/moderation/index.js';
import { blobStoreFromEnv, type BlobStore } from '../../adapters/blob/index.js';
import { MemoryTicketStore, PgTicketStore, RedisTicketStore, type TicketStore } from './tickets.js';

/** Outside services and secrets of the documents area, one set per running platform. */
export interface DocumentsDeps {
  moderation: ModerationPort;
  blobs: BlobStore;
  /** HMAC key of signed file URLs. */
  urlSecret: Buffer;
  tickets: TicketStore;
}

const byPlatform = new WeakMap<Platform, DocumentsDeps>();

/** COLLAB_TICKET_STORE: `postgres` (default) or `memory`; anything else stops the start, not a silent `postgres`. */
export function ticketStoreKind(v: string | undefined): 'postgres' | 'memory' {
  if (v === undefined || v === '' || v === 'postgres') return 'postgres';
  if (v === 'memory') return 'memory';
  throw new Error(`COLLAB_TICKET_STORE must be postgres or memory, got "${v}"`);
}

/**
 * Made from the environment (MODERATION_*, S3_*, COLLAB_TICKET_STORE, DATA_DIR) when the area loads, so a bad setting
 * refuses the start rather than failing requests. The URL-signing secret is
 * derived from the platform's encryption key, so every node of a deployment shares it without new set-up.
 */
export function documentsDeps(platform: Platform): DocumentsDeps {
  let d = byPlatform.get(platform);
  if (!d) {
    const ticketStore = ticketStoreKind(process.env.COLLAB_TICKET_STORE); // checked with REDIS_URL too: a typo is a typo
    d = {
      moderation: moderationFromEnv(process.env),
      blobs: blobStoreFromEnv(platform.config.dataDir, process.env),
      urlSecret: createHmac('sha256', platform.box.derive('documents.signed-url')).update('v1').digest(),
      tickets: platform.redis ? new RedisTicketStore(platform.redis)
        : ticketStore === 'memory' ? new MemoryTicketStore() : new PgTicketStore(platform.db),
    };
    byPlatform.set(platform, d);
  }
  return d;
}

/** Tests and embedders replace single dependencies (a local moderation server, another blob store). */
export function setDocumentsDeps(platform: Platform, patch: Partial<DocumentsDeps>): void {
  byPlatform.set(platform, { ...documentsDeps(platform), ...patch });
}
