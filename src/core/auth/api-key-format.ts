import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../crypto.js';

/** svc_live_<8-char prefix>_<32-or-64-char secret>, secret hex or base64url (spec 5.2). */
export const API_KEY_RE = /^svc_live_([A-Za-z0-9]{8})_([A-Za-z0-9_-]{32}|[A-Za-z0-9_-]{43}|[A-Za-z0-9_-]{64})$/;

/** Whether a bearer is meant as an API key (then a malformed one is INVALID_API_KEY, not a bad JWT); any case. */
export const looksLikeApiKey = (token: string): boolean => /^svc_live_/i.test(token);

export function parseApiKey(token: string): { prefix: string } | null {
  const m = API_KEY_RE.exec(token);
  return m ? { prefix: m[1] } : null;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const bytes = randomBytes(8);
  let prefix = '';
  for (const b of bytes) prefix += ALNUM[b % ALNUM.length];
  const key = `svc_live_${prefix}_${randomBytes(32).toString('hex')}`;
  return { key, prefix, hash: sha256Hex(key) };
}

export const hashApiKey = (key: string): string => sha256Hex(key);
