import { AppError } from './errors.js';
import { charLength } from './text.js';

/** Settings and preference keys: 1-200 characters (spec part 8). */
export const KEY_LENGTH = { minLength: 1, maxLength: 200 } as const;

/**
 * Refuses a top-level key of a settings write (organization settings, user preferences) outside 1-200 characters
 * (spec part 8) with 400 VALIDATION_ERROR: such a key could never be read back through `GET .../{key}`. A key whose value is null
 * (a removal) is let through, so a key stored before this rule (or by another route) can still be removed.
 */
export function assertSettingKeys(field: string, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) continue;
    const length = charLength(key); // as the path parameter's maxLength counts them
    if (length < KEY_LENGTH.minLength || length > KEY_LENGTH.maxLength) {
      throw new AppError('VALIDATION_ERROR', `Keys of "${field}" must be ${KEY_LENGTH.minLength}-${KEY_LENGTH.maxLength} characters; one has ${length}`,
        { field, reason: 'KEY_LENGTH', minLength: KEY_LENGTH.minLength, maxLength: KEY_LENGTH.maxLength, length });
    }
  }
}
