import type { Platform } from './context.js';

/**
 * One `T` per platform, made on first use: the in-process state an area keeps beside a platform (caches, rooms,
 * adapters built from its configuration). Keyed weakly, so a platform that is closed and dropped (tests make many)
 * takes its state with it.
 */
export function perPlatform<T>(make: (platform: Platform) => T): (platform: Platform) => T {
  const byPlatform = new WeakMap<Platform, T>();
  return (platform) => {
    let value = byPlatform.get(platform);
    if (value === undefined) { value = make(platform); byPlatform.set(platform, value); }
    return value;
  };
}
