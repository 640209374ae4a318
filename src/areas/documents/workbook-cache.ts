import { perPlatform } from '../../core/per-platform.js';
import { parseCountedWorkbook, workbookDisplay, type CellValue, type CountedWorkbook, type Workbook } from './sheet-model.js';

/**
 * Parsed workbooks of the sheets being edited on this node, each with the exact stored text it was parsed from.
 *
 * Why: a sheet socket's every edit and snapshot read the stored JSON and parsed and checked all of it on the event
 * loop (~0.2 s at the cell bound, 200,000 cells), though the text was most often the one the previous edit wrote here.
 *
 * Why it is never stale: an entry is used only when the text read now (under the row lock, for an edit) is the very
 * text it holds (string equality: lengths first, then bytes; a few milliseconds against a parse of a fraction of a
 * second), so whatever wrote the row meanwhile (a REST PUT, another node's edit) is a miss and is parsed. An edit
 * takes its entry out before it changes the model (`take`), and puts it back with the text it wrote only once that
 * write committed (`put`): an edit that fails half-way leaves nothing behind. Snapshots only read the model (`read`),
 * and a model handed to a reader is never given to an edit to change (the reader may still hold it across an await):
 * the next edit parses its own, and the entry it puts back is again one no reader holds. So a sheet edited again and
 * again is parsed once; a snapshot in between costs the next edit one parse.
 *
 * Bounded by cells (MAX_CELLS in all, the least recently used out; a parsed 200,000-cell workbook took ~26 MB and its
 * text ~5 MB, so ~60 MB at worst) and by entries; a workbook larger than the bound is not kept.
 */
const MAX_CELLS = 400_000;
const MAX_ENTRIES = 200;

interface Entry { text: string; counted: CountedWorkbook; shared: boolean }

export class WorkbookCache {
  private entries = new Map<string, Entry>();
  private cells = 0;

  constructor(private readonly limits = { maxCells: MAX_CELLS, maxEntries: MAX_ENTRIES }) {}

  /** The parsed workbook of `text` (the stored content of sheet `key`), to read only: it may be shared. */
  read(key: string, text: string): CountedWorkbook {
    const hit = this.entries.get(key);
    if (hit && hit.text === text) {
      this.entries.delete(key);
      this.entries.set(key, hit); // Map order: first key = least recently used
      hit.shared = true;
      return hit.counted;
    }
    const counted = parseCountedWorkbook(text);
    this.put(key, text, counted);
    const entry = this.entries.get(key);
    if (entry) entry.shared = true;
    return counted;
  }

  /** The parsed workbook of `text`, for the caller alone to change: the cache no longer holds it, and no reader does. */
  take(key: string, text: string): CountedWorkbook {
    const hit = this.entries.get(key);
    this.drop(key);
    return hit && hit.text === text && !hit.shared ? hit.counted : parseCountedWorkbook(text);
  }

  /** Keeps `counted` as the parse of `text`, the content of sheet `key` now stored (replacing what the key held). */
  put(key: string, text: string, counted: CountedWorkbook): void {
    this.drop(key);
    if (counted.cells > this.limits.maxCells) return;
    this.entries.set(key, { text, counted, shared: false });
    this.cells += counted.cells;
    while (this.cells > this.limits.maxCells || this.entries.size > this.limits.maxEntries) this.drop(this.entries.keys().next().value!);
  }

  /** Forgets sheet `key` (when it was deleted). */
  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.cells -= entry.counted.cells;
  }

  get size(): number { return this.entries.size; }
  get heldCells(): number { return this.cells; }
}

const displays = new WeakMap<Workbook, Array<Record<string, CellValue>>>();

/**
 * The displayed values (a snapshot's `display`) of a workbook `read` handed out, computed once for every snapshot of
 * it: such a model is never changed afterwards (an edit takes its own), and a recalculation of a large sheet costs a
 * tenth of a second or more for each socket that opens on it. Kept as long as the model is.
 */
export function sharedDisplay(wb: Workbook): Array<Record<string, CellValue>> {
  let display = displays.get(wb);
  if (!display) displays.set(wb, (display = workbookDisplay(wb)));
  return display;
}

/** This node's cache of a platform. */
export const workbookCache = perPlatform(() => new WorkbookCache());
