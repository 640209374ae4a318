import { randomFillSync } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (s: string): boolean => UUID_RE.test(s);

const pool = Buffer.alloc(16 * 256);
let poolPos = pool.length;
let lastMs = 0;
let seq = 0;

/** RFC 9562 UUIDv7: 48-bit unix ms, then random; monotonic within a millisecond on this process. */
export function uuidv7(): string {
  if (poolPos >= pool.length) { randomFillSync(pool); poolPos = 0; }
  const b = Buffer.from(pool.subarray(poolPos, poolPos + 16));
  poolPos += 16;
  let ms = Date.now();
  if (ms <= lastMs) { ms = lastMs; seq = (seq + 1) & 0xfff; if (seq === 0) { ms = ++lastMs; } } else { seq = b.readUInt16BE(6) & 0x7ff; }
  lastMs = ms;
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | ((seq >> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
