import { describe, expect, it } from 'vitest';
import { applyCellEdit } from './sheet-cell-edit.js';
import { MAX_WORKBOOK_CELLS } from './sheet-model.js';

const content = (cells: Record<string, unknown>, more: unknown[] = []) => JSON.stringify({ sheets: [{ name: 'S', cells }, ...more] });

describe('applyCellEdit', () => {
  it('answers the edited cell and the formulas whose value moved, and gives the workbook to write as JSON', () => {
    const stored = content({ A1: { v: 1 }, B1: { f: '=A1*2' }, C1: { f: '=7' } }, [{ name: 'T', cells: { A1: { f: '=1+1' } } }]);
    const { next, result } = applyCellEdit(stored, { sheet: 0, cell: 'A1', value: 5 });
    expect(result).toEqual({ sheet: 0, cell: 'A1', data: { v: 5 }, display: { A1: 5, B1: 10 } });
    expect(JSON.parse(next)).toEqual({ sheets: [{ name: 'S', cells: { A1: { v: 5 }, B1: { f: '=A1*2' }, C1: { f: '=7' } } }, { name: 'T', cells: { A1: { f: '=1+1' } } }] });
  });

  it('shows the value of the first formula of a workbook that had none, and null for the last formula once cleared', () => {
    const { next, result } = applyCellEdit(content({ A1: { v: 3 } }), { sheet: 0, cell: 'B1', formula: '=A1+1' });
    expect(result).toEqual({ sheet: 0, cell: 'B1', data: { f: '=A1+1' }, display: { B1: 4 } });
    expect(applyCellEdit(next, { sheet: 0, cell: 'B1' }).result).toEqual({ sheet: 0, cell: 'B1', data: null, display: { B1: null } });
    // A formula replaced by a value: the formulas reading it move, the value shows as stored.
    const chain = content({ A1: { f: '=2' }, B1: { f: '=A1*10' } });
    expect(applyCellEdit(chain, { sheet: 0, cell: 'A1', value: 'x' }).result).toEqual({ sheet: 0, cell: 'A1', data: { v: 'x' }, display: { A1: 'x', B1: '#ERROR!' } });
    expect(applyCellEdit(chain, { sheet: 0, cell: 'A1', formula: '=3' }).result).toEqual({ sheet: 0, cell: 'A1', data: { f: '=3' }, display: { A1: 3, B1: 30 } });
  });

  it(`refuses a new cell in a workbook of ${MAX_WORKBOOK_CELLS} cells (all sheets counted) with TOO_MANY_CELLS, and edits or clears one there`, () => {
    const column = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`A${i + 1}`, { v: i }]));
    const full = content(column(MAX_WORKBOOK_CELLS - 1), [{ name: 'T', cells: { B1: { f: '=1' } } }]);
    expect(() => applyCellEdit(full, { sheet: 1, cell: 'B2', value: 1 })).toThrow(expect.objectContaining({
      code: 'VALIDATION_ERROR', message: `The workbook holds ${MAX_WORKBOOK_CELLS} cells, its most: clear cells before adding B2`,
      details: { field: 'cell', reason: 'TOO_MANY_CELLS', limit: MAX_WORKBOOK_CELLS },
    }));
    expect(applyCellEdit(full, { sheet: 1, cell: 'B1', value: 2 }).result.data).toEqual({ v: 2 });
    expect(applyCellEdit(full, { sheet: 0, cell: 'A9', value: null }).result.data).toBeNull();
    const fits = content(column(MAX_WORKBOOK_CELLS - 2), [{ name: 'T', cells: { B1: { f: '=1' } } }]);
    expect(applyCellEdit(fits, { sheet: 1, cell: 'B2', value: 1 }).result.data).toEqual({ v: 1 });
  });

  it('refuses stored content that is not a workbook with VALIDATION_ERROR, and a sheet it does not have', () => {
    const cases: Array<[string, string]> = [
      ['not json', 'Sheet content must be JSON'],
      ['{"sheets":{}}', 'Sheet content needs 1-100 sheets'],
      ['{"sheets":[{"name":"S","cells":{"A1":"text"}}]}', 'Bad cell A1: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object'],
      ['{"sheets":[{"name":"S","cells":{"A1":{"f":5}}}]}', 'Formula of A1 must start with ='],
    ];
    for (const [stored, message] of cases) {
      expect(() => applyCellEdit(stored, { sheet: 0, cell: 'B1', value: 1 })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', message, details: { field: 'content' } }));
    }
    expect(() => applyCellEdit(content({}), { sheet: 1, cell: 'A1', value: 1 })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', message: 'Sheet 1 does not exist', details: { field: 'sheet' } }));
  });
});
