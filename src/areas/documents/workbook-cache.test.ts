import { describe, expect, it } from 'vitest';
import { WorkbookCache, sharedDisplay } from './workbook-cache.js';
import { workbookDisplay } from './sheet-model.js';

const text = (cells: Record<string, unknown>) => JSON.stringify({ sheets: [{ name: 'S', cells }] });
const A = text({ A1: { v: 1 }, A2: { v: 2 } });
const B = text({ B1: { v: 'b' } });

describe('WorkbookCache', () => {
  it('answers a read of the text it holds with the same parse, and parses any other text', () => {
    const c = new WorkbookCache();
    const first = c.read('k', A);
    expect(first).toMatchObject({ cells: 2, formulas: 0 });
    expect(c.read('k', A)).toBe(first);
    const other = c.read('k', B);
    expect(other).not.toBe(first);
    expect(other.workbook.sheets[0].cells).toEqual({ B1: { v: 'b' } });
    // The key now holds B's parse; A is parsed again.
    expect(c.read('k', A)).not.toBe(first);
  });

  it('gives an edit a model no reader holds: after a read, a new parse; after an edit put it back, the same objects', () => {
    const c = new WorkbookCache();
    const read = c.read('k', A);
    const taken = c.take('k', A);
    expect(taken).not.toBe(read);
    expect(taken).toEqual(read);
    expect(c.size).toBe(0);
    // What an edit writes and puts back is handed to the next edit as it is.
    taken.workbook.sheets[0].cells.A3 = { v: 3 };
    const written = JSON.stringify(taken.workbook);
    c.put('k', written, { ...taken, cells: 3 });
    const again = c.take('k', written);
    expect(again.workbook).toBe(taken.workbook);
    expect(again.cells).toBe(3);
    // A text written meanwhile by someone else (a REST PUT) is never answered from what the cache held.
    c.put('k', written, again);
    expect(c.take('k', B).workbook.sheets[0].cells).toEqual({ B1: { v: 'b' } });
  });

  it('holds at most its cells (the least recently used go first) and does not keep a workbook larger than that', () => {
    const c = new WorkbookCache({ maxCells: 4, maxEntries: 10 });
    c.read('a', A);
    c.read('b', A);
    expect([c.size, c.heldCells]).toEqual([2, 4]);
    c.read('a', A); // a is now the most recently used
    c.read('c', B);
    expect([c.size, c.heldCells]).toEqual([2, 3]);
    const a = c.read('a', A);
    expect(c.read('a', A)).toBe(a); // kept
    c.read('big', text({ A1: { v: 1 }, A2: { v: 1 }, A3: { v: 1 }, A4: { v: 1 }, A5: { v: 1 } }));
    expect(c.heldCells).toBeLessThanOrEqual(4);
    expect(c.size).toBe(2);
  });

  it('every snapshot of a model handed to readers shares one display, the one a recalculation gives', () => {
    const c = new WorkbookCache();
    const wb = c.read('k', text({ A1: { v: 2 }, A2: { f: '=A1*3' } })).workbook;
    const display = sharedDisplay(wb);
    expect(display).toEqual([{ A1: 2, A2: 6 }]);
    expect(display).toEqual(workbookDisplay(wb));
    expect(sharedDisplay(c.read('k', text({ A1: { v: 2 }, A2: { f: '=A1*3' } })).workbook)).toBe(display);
    // An edit gets its own model, so the display shared by readers stays right for the text they read.
    const taken = c.take('k', text({ A1: { v: 2 }, A2: { f: '=A1*3' } }));
    taken.workbook.sheets[0].cells.A1 = { v: 5 };
    expect(sharedDisplay(wb)).toEqual([{ A1: 2, A2: 6 }]);
    expect(sharedDisplay(taken.workbook)).toEqual([{ A1: 5, A2: 15 }]);
  });

  it('a malformed stored text is refused as before and leaves nothing cached', () => {
    const c = new WorkbookCache();
    expect(() => c.read('k', '{"sheets": []}')).toThrow('Sheet content needs 1-100 sheets');
    expect(() => c.take('k', 'nope')).toThrow('Sheet content must be JSON');
    expect(c.size).toBe(0);
  });
});
