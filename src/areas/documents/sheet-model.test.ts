import { describe, expect, it } from 'vitest';
import { evaluate, formulaCellRefs, parseCountedWorkbook, parseWorkbook, workbookDisplay, type Cell, type Workbook } from './sheet-model.js';

const errorOf = (fn: () => unknown) => {
  try { fn(); } catch (err) { const e = err as { code?: string; message: string; details?: unknown }; return { code: e.code, message: e.message, details: e.details }; }
  throw new Error('expected an error');
};

describe('parseCountedWorkbook', () => {
  it('counts the cells and the formula cells of every sheet', () => {
    const content = JSON.stringify({ sheets: [
      { name: 'One', cells: { A1: { v: 1 }, A2: { f: '=A1*2' }, B1: { v: null }, B2: {} } },
      { name: 'Two', cells: { C3: { f: '=1', v: 'cached' }, D4: { v: true } } },
      { name: 'Empty', cells: {} },
    ] });
    const { workbook, cells, formulas } = parseCountedWorkbook(content);
    expect({ cells, formulas }).toEqual({ cells: 6, formulas: 2 });
    expect(workbook).toEqual(parseWorkbook(content));
    expect(parseCountedWorkbook('')).toMatchObject({ cells: 0, formulas: 0 });
  });

  it('refuses stored content that is not a workbook with the VALIDATION_ERROR naming the first fault, in the order of the cells', () => {
    const cases: Array<[string, string]> = [
      ['{', 'Sheet content must be JSON'],
      ['[]', 'Sheet content needs 1-100 sheets'],
      ['{"sheets":[]}', 'Sheet content needs 1-100 sheets'],
      ['{"sheets":[null]}', 'Each sheet needs a name and cells'],
      ['{"sheets":[{"name":"S","cells":null}]}', 'Each sheet needs a name and cells'],
      ['{"sheets":[{"name":"S","cells":[{"v":1}]}]}', 'Bad cell 0: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object'],
      // Integer-like keys come first in a parsed object: "7" is the first fault, as Object.entries found it.
      ['{"sheets":[{"name":"S","cells":{"A1":{"v":1},"a1":{},"7":{}}}]}', 'Bad cell 7: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object'],
      ['{"sheets":[{"name":"S","cells":{"A1":{"v":1},"A0":{}}}]}', 'Bad cell A0: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object'],
      ['{"sheets":[{"name":"S","cells":{"A1":null}}]}', 'Bad cell A1: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object'],
      ['{"sheets":[{"name":"S","cells":{"A1":{"f":"SUM(1)"}}}]}', 'Formula of A1 must start with ='],
      ['{"sheets":[{"name":"S","cells":{"A1":{"f":7}}}]}', 'Formula of A1 must start with ='],
      ['{"sheets":[{"name":"S","cells":{"A1":{"f":"=1","v":{"x":1}}}}]}', 'Bad value in A1'],
      ['{"sheets":[{"name":"S","cells":{"A1":{"v":[1]}}}]}', 'Bad value in A1'],
    ];
    for (const [content, message] of cases) {
      expect([content, errorOf(() => parseCountedWorkbook(content))]).toEqual([content, { code: 'VALIDATION_ERROR', message, details: { field: 'content' } }]);
    }
  });
});

describe('workbookDisplay', () => {
  it('shows every cell in the order of the sheet, value cells as stored and formula cells as the recalculation gives them', () => {
    const cells: Record<string, Cell> = { B2: { v: 'text' }, A1: { f: '=B1+1' }, B1: { v: 4 }, C1: {}, C2: { v: false }, A2: { f: '=A1&B2' }, A3: { f: '=A3' }, C3: { v: null } };
    const wb: Workbook = { sheets: [{ name: 'S', cells }, { name: 'Values', cells: { Z9: { v: 1 }, A1: { v: '=not a formula' } } }] };
    const shown = workbookDisplay(wb);
    expect(shown.map((s) => Object.keys(s))).toEqual([Object.keys(cells), ['Z9', 'A1']]);
    expect(shown[0]).toEqual({ B2: 'text', A1: 5, B1: 4, C1: null, C2: false, A2: '5text', A3: '#CYCLE!', C3: null });
    expect(shown[1]).toEqual({ Z9: 1, A1: '=not a formula' });
    const value = evaluate(wb.sheets[0]);
    for (const ref of Object.keys(cells)) expect([ref, shown[0][ref]]).toEqual([ref, value(ref)]);
  });
});

describe('formulaCellRefs', () => {
  it('names the formula cells of each sheet in the order of its cells', () => {
    const wb: Workbook = { sheets: [{ name: 'S', cells: { C1: { f: '=1' }, A1: { v: 1 }, B7: { f: '=2', v: 3 }, A2: {} } }, { name: 'T', cells: {} }] };
    expect(formulaCellRefs(wb)).toEqual([['C1', 'B7'], []]);
  });
});

describe('ranges over cells listed out of row order', () => {
  it('read the cells row by row whatever the order of the content', () => {
    const cells: Record<string, Cell> = { A3: { v: 'c' }, B1: { v: 'x' }, A1: { v: 'a' }, B3: { v: 'z' }, A2: { f: '="b"' }, C1: { f: '=CONCAT(A1:B3)' }, C2: { f: '=CONCAT(A1:A3)' } };
    const value = evaluate({ name: 'S', cells });
    expect([value('C1'), value('C2')]).toEqual(['axbcz', 'abc']);
  });
});
