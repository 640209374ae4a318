import { AppError } from '../../core/errors.js';

export const PASSWORD_MIN_LENGTH = 12;

const tooShort = () => new AppError('VALIDATION_ERROR', `Field "password" must be at least ${PASSWORD_MIN_LENGTH} characters`, { field: 'password', reason: 'WEAK_PASSWORD' });

/**
 * The password rule (registration, and passwords the CLI sets): the design's contract is "password (min 12)", so any
 * password of 12 or more characters is accepted (clients built on the contract, e.g. with "MyPassword-2024!", must
 * not be turned away by a rule it does not state). Only degenerate passwords of fewer than 5 distinct characters are
 * refused as well.
 */
export function assertPassword(pw: string): void {
  if (pw.length < PASSWORD_MIN_LENGTH) throw tooShort();
  if (new Set(pw).size < 5) {
    throw new AppError('VALIDATION_ERROR', 'Field "password" is too weak: use at least 5 different characters', { field: 'password', reason: 'WEAK_PASSWORD' });
  }
}
