import type { Platform } from '../../core/context.js';
import { liveRooms, roomKey, saveStoredContent } from './collab.service.js';
import { documentsBehind } from './collab.repo.js';

/** How often the job looks for documents whose collaborative text was not written back. */
export const RECONCILE_EVERY_MS = 15_000;
/** Updates younger than this may still be written back by their room (it saves 300 ms after changes stop). */
const QUIET_SECONDS = 10;
const BATCH = 100;

/**
 * Writes back the collaborative text of documents whose stored updates go past what was written to `content`
 * (collab_saved, migration 0060): a server that crashed between appending an update (durable at once) and writing
 * the text back (debounced) left REST readers, search and the next REST write on the older text. Documents open in
 * a room on this node are left to the room. Returns how many documents it looked at.
 */
export async function reconcileCollabContent(platform: Platform): Promise<number> {
  const behind = await documentsBehind(platform.db.sys, QUIET_SECONDS, BATCH);
  const live = liveRooms(platform);
  for (const d of behind) {
    if (live.has(roomKey(d.org_id, d.document_id))) continue;
    try {
      await saveStoredContent(platform, d.org_id, d.document_id);
    } catch (err) {
      platform.log.warn({ err, documentId: d.document_id }, 'collaboration content not reconciled');
    }
  }
  return behind.length;
}
