import type { Platform, ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';

/**
 * A context for offline administration (the CLI): no principal, so services skip the caller's permission
 * checks and audit rows read credential kind "system" with request id `<via>:<uuid>`.
 * Services that act inside one organization take it explicitly in this case.
 */
export function systemContext(platform: Platform, via = 'cli'): ServiceContext {
  return { platform, principal: null, requestId: `${via}:${uuidv7()}`, ip: null, userAgent: via };
}
