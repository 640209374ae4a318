import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(buf: Buffer): string {
  let bits = 0, value = 0, out = '';
  for (const byte of buf) {
    value = (value << 8) | byte; bits += 8;
    while (bits >= 5) { out += B32[(value >>> (bits - 5)) & 31]; bits -= 5; }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(s: string): Buffer {
  const clean = s.replace(/=+$/, '').toUpperCase();
  let bits = 0, value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const idx = B32.indexOf(ch);
    if (idx < 0) throw new Error('invalid base32');
    value = (value << 5) | idx; bits += 5;
    if (bits >= 8) { out.push((value >>> (bits - 8)) & 255); bits -= 8; }
  }
  return Buffer.from(out);
}

export const newTotpSecret = (): string => base32Encode(randomBytes(20));

const STEP_MS = 30_000;

/** HOTP (RFC 4226) of one counter: HMAC-SHA-1, dynamic truncation, 6 digits. */
function hotp(secret: string, counter: number): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const h = createHmac('sha1', base32Decode(secret)).update(msg).digest();
  const off = h[h.length - 1] & 0xf;
  const code = ((h.readUInt32BE(off) & 0x7fffffff) % 1_000_000).toString();
  return code.padStart(6, '0');
}

/** The RFC 6238 time step (counter) of an instant: 30-second steps from the Unix epoch. */
export const totpStepAt = (timeMs: number): number => Math.floor(timeMs / STEP_MS);

/** RFC 6238 TOTP: HMAC-SHA-1, 6 digits, 30-second steps. */
export function totpAt(secret: string, timeMs: number, step = 30): string {
  return hotp(secret, Math.floor(timeMs / 1000 / step));
}

/**
 * The time step a code belongs to, or null: the current step and one either side are tried (clock drift), earliest
 * first, skipping steps at or before `after` (the last step already accepted for the user). RFC 6238 §5.2: a code is
 * good once, so the caller records the returned step and refuses the code when that record finds a later or equal
 * step already there (accountsRepo.acceptTotpStep).
 */
export function verifyTotp(secret: string, code: string, now = Date.now(), after: number | null = null): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const current = totpStepAt(now);
  for (const step of [current - 1, current, current + 1]) {
    if (after !== null && step <= after) continue;
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(code))) return step;
  }
  return null;
}

export const otpauthUrl = (secret: string, account: string, issuer = 'Platform') =>
  `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(account)}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=6&period=30`;
