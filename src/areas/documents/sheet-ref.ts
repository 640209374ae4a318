/** Excel's grid (columns A to XFD, rows 1 to 1,048,576): a cell outside it could not be exported as xlsx. */
export const MAX_COLUMNS = 16_384;
export const MAX_ROWS = 1_048_576;

const A = 65;
const Z = 90;
const ZERO = 48;
const NINE = 57;

/**
 * An A1 reference inside Excel's grid (1-3 capital letters, then a row number of 1-7 digits without a leading zero,
 * nothing else), zero-based; null for anything else. A scan of its characters, not a regular
 * expression: every read of a sheet checks each of up to 200,000 cell references on the event loop, and the match
 * with its captured groups cost several times this (sheet-ref.test.ts checks both agree).
 */
export function parseRef(ref: string): { col: number; row: number } | null {
  const n = ref.length;
  let i = 0;
  let col = 0;
  for (let c = ref.charCodeAt(0); i < n && c >= A && c <= Z; c = ref.charCodeAt(++i)) col = col * 26 + (c - A + 1);
  // Longer runs of letters or digits are past the grid's bounds below anyway: these end the scan early.
  if (i === 0 || i > 3) return null;
  const digits = n - i;
  if (digits < 1 || digits > 7 || ref.charCodeAt(i) === ZERO) return null;
  let row = 0;
  for (; i < n; i++) {
    const c = ref.charCodeAt(i);
    if (c < ZERO || c > NINE) return null;
    row = row * 10 + (c - ZERO);
  }
  return col > MAX_COLUMNS || row > MAX_ROWS ? null : { col: col - 1, row: row - 1 };
}

export function colName(col: number): string {
  let s = '';
  for (let n = col + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** The A1 reference of a zero-based column and row. */
export const cellRef = (col: number, row: number): string => `${colName(col)}${row + 1}`;
