import { AppError } from '../../core/errors.js';

export const PASSWORD_MIN_LENGTH = 12;
const COMMON = ['password', '123456', 'qwerty', 'letmein', 'welcome', 'abcdef', 'iloveyou', 'admin'];

/**
 * Refuses weak passwords with VALIDATION_ERROR (details.reason WEAK_PASSWORD): shorter than 12 characters,
 * fewer than 5 distinct characters, a well-known word or sequence, or the e-mail's local part (when 4+ chars).
 */
export function assertStrongPassword(pw: string, email: string): void {
  if (pw.length < PASSWORD_MIN_LENGTH) {
    throw new AppError('VALIDATION_ERROR', `Field "password" must be at least ${PASSWORD_MIN_LENGTH} characters`, { field: 'password', reason: 'WEAK_PASSWORD' });
  }
  const lower = pw.toLowerCase();
  const local = email.split('@')[0].toLowerCase();
  if (new Set(pw).size < 5 || COMMON.some((c) => lower.includes(c)) || (local.length >= 4 && lower.includes(local))) {
    throw new AppError('VALIDATION_ERROR', 'Field "password" is too weak: avoid common words, your e-mail name and repeated characters', { field: 'password', reason: 'WEAK_PASSWORD' });
  }
}
