import { AppError } from '../../core/errors.js';
import { charLength } from '../../core/text.js';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;
const PASSWORD_MIN_DISTINCT = 5;
/** The rule in words, for help texts and mails: keep it in step with assertPassword. */
export const PASSWORD_RULE = `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters, at least ${PASSWORD_MIN_DISTINCT} of them different`;

const tooShort = () => new AppError('VALIDATION_ERROR', `Field "password" must be at least ${PASSWORD_MIN_LENGTH} characters`, { field: 'password', reason: 'WEAK_PASSWORD' });
const tooLong = () => new AppError('VALIDATION_ERROR', `Field "password" must be at most ${PASSWORD_MAX_LENGTH} characters`, { field: 'password', reason: 'WEAK_PASSWORD' });

/**
 * The password rule (registration, and passwords the CLI sets): the design's contract is "password (min 12)", so any
 * password of 12 to 256 characters is accepted (clients built on the contract, e.g. with "MyPassword-2024!", must
 * not be turned away by a rule it does not state). Only degenerate passwords of fewer than 5 distinct characters are
 * refused as well.
 */
export function assertPassword(pw: string): void {
  // Characters are code points, as the REST bodies' schemas count them (an emoji is one); the CLI's --password
  // reaches here without a schema.
  const length = charLength(pw);
  if (length < PASSWORD_MIN_LENGTH) throw tooShort();
  if (length > PASSWORD_MAX_LENGTH) throw tooLong();
  if (new Set(pw).size < PASSWORD_MIN_DISTINCT) {
    throw new AppError('VALIDATION_ERROR', `Field "password" is too weak: use at least ${PASSWORD_MIN_DISTINCT} different characters`, { field: 'password', reason: 'WEAK_PASSWORD' });
  }
}
