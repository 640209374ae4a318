import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { MAX_FORMULA_CELLS, MAX_FORMULA_LENGTH, MAX_FORMULA_TEXT, MAX_RECALCULATION_WORK, MAX_SHOWN_FORMULA_TEXT, RANGE_CELLS_PER_UNIT, evaluate, evaluateWorkbook, workbookDisplay, type Cell, type CellValue } from './sheet-model.js';
import { editCell, openSheetSession } from './sheet-edit.service.js';

/**
 * The bounds on formula work (sheet-model.ts): evaluation runs on the event loop, so one tenant's formula must not stall
 * everybody's requests. A formula past a bound is #ERROR!, never evaluated, the same in every path that shows values.
 */
const sheet = (cells: Record<string, Cell>) => ({ name: 'S', cells });
const valuesOf = (cells: Record<string, Cell>, refs: string[]) => { const v = evaluate(sheet(cells)); return refs.map((r) => v(r)); };

describe('bounds on formula work (the model)', () => {
  it('the bounds are the documented ones', () => {
    expect([MAX_FORMULA_LENGTH, MAX_FORMULA_CELLS, MAX_RECALCULATION_WORK, RANGE_CELLS_PER_UNIT, MAX_FORMULA_TEXT, MAX_SHOWN_FORMULA_TEXT]).toEqual([8192, 100_000, 250_000, 10, 32_767, 10_000_000]);
  });

  it('a formula whose references cover more than 100,000 cells in all (repeats counted) is #ERROR! and is not evaluated', () => {
    const data = { A1: { v: 1 }, A2: { v: 2 } };
    expect(valuesOf({ ...data, B1: { f: '=SUM(A1:A50000,A1:A50000)' } }, ['B1'])).toEqual([6]);
    expect(valuesOf({ ...data, B1: { f: '=SUM(A1:A99999)+A1' } }, ['B1'])).toEqual([4]);
    expect(valuesOf({ ...data, B1: { f: '=SUM(A1:A50000,A1:A50001)' } }, ['B1'])).toEqual(['#ERROR!']);
    expect(valuesOf({ ...data, B1: { f: '=SUM(A1:A99999)+A1+A2' } }, ['B1'])).toEqual(['#ERROR!']);
    // The reported formula: a hundred 100,000-cell ranges in 1 KB (10 million cell reads, seconds on the event loop).
    const t0 = Date.now();
    expect(valuesOf({ ...data, DA1: { f: `=SUM(${Array(100).fill('A2:CV1001').join(',')})` } }, ['DA1'])).toEqual(['#ERROR!']);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a formula longer than 8,192 characters is #ERROR!; one of 8,192 runs', () => {
    const longest = `=${'1+'.repeat(4095)}1`;
    expect(longest.length).toBe(8192);
    expect(valuesOf({ A1: { f: longest }, A2: { f: `${longest}0` } }, ['A1', 'A2'])).toEqual([4096, '#ERROR!']);
  });

  it('the recalculation budget (each formula its length, its single references and a tenth of its range cells) is spent in the order of the content, sheet by sheet, whichever cell is asked first', () => {
    const sum100k = '=SUM(A1:A100000)'; // 16 characters + 100,000 range cells / 10: 10,016
    const first: Record<string, Cell> = { A1: { v: 1 } };
    for (let i = 1; i <= 25; i++) first[`B${i}`] = { f: sum100k };
    first.B26 = { f: '=A1+1' };
    const wb = { sheets: [
      // 24 x 10,016 = 240,384 fit; 9,616 left: B25 is charged its length only (it does not fit), B26 6 (5 + 1 reference).
      sheet(first),
      // 9,594 left: 16 + 10,000 does not fit; 15 + 9,000 does.
      sheet({ A1: { v: 5 }, D1: { f: sum100k }, D2: { f: '=SUM(A1:A90000)' } }),
    ] };
    const firstShown: Record<string, CellValue> = { A1: 1 };
    for (let i = 1; i <= 24; i++) firstShown[`B${i}`] = 1;
    Object.assign(firstShown, { B25: '#ERROR!', B26: 2 });
    expect(workbookDisplay(wb)).toEqual([firstShown, { A1: 5, D1: '#ERROR!', D2: 5 }]);
    // Asking the second sheet first, or the cells in reverse order, changes nothing.
    const value = evaluateWorkbook(wb);
    expect(['D2', 'D1', 'A1'].map(value(1))).toEqual([5, '#ERROR!', 5]);
    expect(['B26', 'B25', 'B24', 'B1'].map(value(0))).toEqual([2, '#ERROR!', 1, 1]);
    // The second sheet on its own is a workbook of its own, with the whole budget.
    expect(evaluate(wb.sheets[1])('D1')).toBe(5);
  });

  it('a running total of 2,000 rows written as =SUM(A1:An) is within the budget (two million range cells)', () => {
    const cells: Record<string, Cell> = {};
    for (let i = 1; i <= 2000; i++) { cells[`A${i}`] = { v: i }; cells[`B${i}`] = { f: `=SUM(A1:A${i})` }; }
    const shown = workbookDisplay({ sheets: [sheet(cells)] })[0];
    expect(Array.from({ length: 2000 }, (_, i) => shown[`B${i + 1}`])).toEqual(Array.from({ length: 2000 }, (_, i) => ((i + 1) * (i + 2)) / 2));
  });

  it('text: past 255 characters it is not a number, joining or comparing past 32,767 characters is #ERROR!, and so is a longer result', () => {
    const cells = {
      A1: { v: `${' '.repeat(300)}7` }, A2: { v: '  7' }, A3: { v: 'x'.repeat(20_000) }, A4: { v: 'x'.repeat(40_000) }, A5: { v: 1 }, A6: { v: 2 },
      B1: { f: '=A1+1' }, B2: { f: '=A2+1' }, B3: { f: '=A3&A3' }, B4: { f: '=CONCAT(A3,A3)' }, B5: { f: '=A3&"y"' }, B6: { f: '=A4="x"' },
      B7: { f: '=A4' }, B8: { f: '=A3' }, B9: { f: '=A5:A6+1' }, B10: { f: '=A5:A5+1' }, B11: { f: '=A5:A6&"!"' },
    };
    expect(valuesOf(cells, ['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'B9', 'B10', 'B11']))
      .toEqual(['#ERROR!', 8, '#ERROR!', '#ERROR!', `${'x'.repeat(20_000)}y`, '#ERROR!', '#ERROR!', 'x'.repeat(20_000), '#ERROR!', 2, '1,2!']);
  });

  it('formulas show at most 10,000,000 characters of text together: past it, in the order of the content, their text is #ERROR!', () => {
    const cells: Record<string, Cell> = { A1: { v: 'z'.repeat(32_767) } };
    for (let i = 1; i <= 400; i++) cells[`B${i}`] = { f: '=A1' };
    const shown = workbookDisplay({ sheets: [sheet(cells)] })[0];
    // 305 x 32,767 = 9,993,935 characters fit; the 306th would not.
    expect([shown.B1, shown.B305].map((v) => (v as string).length)).toEqual([32_767, 32_767]);
    expect(Object.entries(shown).filter(([, v]) => v === '#ERROR!').map(([ref]) => ref)).toEqual(Array.from({ length: 95 }, (_, i) => `B${306 + i}`));
  });
});

describe('bounds on formula work (every path that shows values)', () => {
  let t: TestApp;
  let a: Tenant;
  let projectId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    a = await newTenant(t.app);
    projectId = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Bounds home' } })).json().data.id;
  });
  afterAll(async () => { await t?.close(); });
  const newSheet = async (name: string, content: unknown) => {
    const id = (await t.app.inject({ method: 'POST', url: `/v1/projects/${projectId}/sheets`, headers: a.auth, payload: { name } })).json().data.document.id as string;
    const put = await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: JSON.stringify(content) } });
    expect(put.statusCode).toBe(200); // stored as sent, like a formula the evaluator cannot read
    return id;
  };
  const exportOf = (id: string, q: string) => t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&${q}` });
  const xlsxBook = async (id: string) => {
    const r = await exportOf(id, 'format=xlsx');
    expect(r.statusCode).toBe(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(r.rawPayload as unknown as ArrayBuffer);
    return book;
  };

  it('the reported 1 KB sheet (a hundred 100,000-cell ranges) is stored, and exports at once with #ERROR! in that cell', async () => {
    const id = await newSheet('Hundred ranges', { sheets: [{ name: 'S', cells: { A1: { f: `=SUM(${Array(100).fill('A2:CV1001').join(',')})` }, A2: { v: 3 } } }] });
    const t0 = Date.now();
    expect((await exportOf(id, 'format=csv&sheet_id=0')).body).toBe('#ERROR!\r\n3\r\n');
    expect((await xlsxBook(id)).worksheets[0].getCell('A1').value).toBe('#ERROR!');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('exports and socket edits spend one budget for the whole workbook, as the snapshot does: a later sheet gets what is left', async () => {
    const sum100k = '=SUM(A1:A100000)'; // 10,016 of the 250,000: 24 fit, 9,616 left
    const firstCells: Record<string, Cell> = { A1: { v: 1 } };
    for (let i = 1; i <= 24; i++) firstCells[`B${i}`] = { f: sum100k };
    const id = await newSheet('Budget', { sheets: [
      { name: 'First', cells: firstCells },
      { name: 'Second', cells: { A1: { v: 5 }, B1: { f: sum100k }, B2: { f: '=A1*2' } } },
    ] });
    expect((await exportOf(id, 'format=csv&sheet_id=1')).body).toBe('5,#ERROR!\r\n,10\r\n');
    const ws = (await xlsxBook(id)).worksheets[1];
    expect(['A1', 'B1', 'B2'].map((c) => ws.getCell(c).value)).toEqual([5, '#ERROR!', 10]);
    const s = await openSheetSession(t.platform, a.token, id);
    // An edit's display is what it changed: here its cell only.
    expect(await editCell(t.platform, s, { sheet: 1, cell: 'C1', value: 1 })).toMatchObject({ display: { C1: 1 } });
    // Once the first sheet spends less, the second sheet's formula runs everywhere: the edit of the first sheet says so.
    const freed = await editCell(t.platform, s, { sheet: 0, cell: 'B2' });
    expect(freed.display).toEqual({ B2: null });
    expect(freed.other_sheets).toEqual([{ sheet: 1, display: { B1: 5 } }]);
    const again = await editCell(t.platform, s, { sheet: 1, cell: 'C1', value: 2 });
    expect(again.display).toEqual({ C1: 2 });
    expect(again.other_sheets).toBeUndefined();
    expect((await exportOf(id, 'format=csv&sheet_id=1')).body).toBe('5,5,2\r\n,10,\r\n');
  });
});
