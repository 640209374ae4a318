import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { evaluate, isSheetFormula, sheetRows } from './sheet-model.js';
import { editCell, openSheetSession } from './sheet-edit.service.js';

/** Sheet and deck content rules: storable text, formula cycles, deck validation, export file names. */
let t: TestApp;
let a: Tenant;
let projectId: string;

beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  projectId = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Content home' } })).json().data.id;
});
afterAll(async () => { await t?.close(); });

const create = (who: Tenant, seg: string, payload: unknown, pid = projectId) =>
  t.app.inject({ method: 'POST', url: `/v1/projects/${pid}/${seg}`, headers: who.auth, payload: payload as object });

const putContent = (id: string, content: unknown) =>
  t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: typeof content === 'string' ? content : JSON.stringify(content) } });
const storedContent = async (id: string) => (await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string;

describe('a workbook holds at most 200,000 cells', () => {
  it('a PUT past it is 400 TOO_MANY_CELLS and nothing is written; a socket edit adding a cell past it is refused, editing or clearing one is not', async () => {
    const id = (await create(a, 'sheets', { name: 'Cell bound' })).json().data.document.id;
    const column = (n: number, col = 'A') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${col}${i + 1}`, { v: i }]));
    const before = await storedContent(id);
    const over = { sheets: [{ name: 'One', cells: column(150_000) }, { name: 'Two', cells: column(50_001) }] };
    const e = errorOf(await putContent(id, over), 400, 'VALIDATION_ERROR');
    expect([e.message, e.details]).toEqual(['Field "content" holds 200001 cells; a workbook holds at most 200000', { field: 'content', reason: 'TOO_MANY_CELLS', limit: 200_000 }]);
    expect(await storedContent(id)).toBe(before);
    expect((await putContent(id, { sheets: [{ name: 'One', cells: column(150_000) }, { name: 'Two', cells: column(50_000) }] })).statusCode).toBe(200);
    const s = await openSheetSession(t.platform, a.token, id);
    await expect(editCell(t.platform, s, { sheet: 1, cell: 'B1', value: 'new' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR', message: 'The workbook holds 200000 cells, its most: clear cells before adding B1', details: { field: 'cell', reason: 'TOO_MANY_CELLS', limit: 200_000 },
    });
    expect((await editCell(t.platform, s, { sheet: 1, cell: 'A1', value: 'edited' })).data).toEqual({ v: 'edited' });
    expect((await editCell(t.platform, s, { sheet: 1, cell: 'A2' })).data).toBeNull();
    expect((await editCell(t.platform, s, { sheet: 1, cell: 'B1', value: 'now fits' })).data).toEqual({ v: 'now fits' });
  }, 60_000);
});

describe('text a sheet cannot store (NUL, unpaired surrogates)', () => {
  it('a socket edit whose value or formula holds NUL or an unpaired surrogate is refused with VALIDATION_ERROR and nothing is stored', async () => {
    const id = (await create(a, 'sheets', { name: 'Socket NUL' })).json().data.document.id;
    const s = await openSheetSession(t.platform, a.token, id);
    await editCell(t.platform, s, { sheet: 0, cell: 'A1', value: 'kept' });
    const before = await storedContent(id);
    const cases: Array<[Parameters<typeof editCell>[2], string]> = [
      [{ sheet: 0, cell: 'A1', value: 'a\u0000b' }, '"value" must not contain the NUL character (\\u0000), which cannot be stored'],
      [{ sheet: 0, cell: 'A2', value: '\u0000' }, '"value" must not contain the NUL character (\\u0000), which cannot be stored'],
      [{ sheet: 0, cell: 'A1', value: 'x\ud800y' }, '"value" contains an unpaired UTF-16 surrogate (\\uD800-\\uDFFF), which cannot be stored'],
      [{ sheet: 0, cell: 'A1', formula: '="a\u0000"' }, '"formula" must not contain the NUL character (\\u0000), which cannot be stored'],
      [{ sheet: 0, cell: 'A1', formula: '="\udc00"' }, '"formula" contains an unpaired UTF-16 surrogate (\\uD800-\\uDFFF), which cannot be stored'],
    ];
    for (const [edit, message] of cases) {
      await expect(editCell(t.platform, s, edit)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR', message, details: { reason: 'UNSTORABLE_CHARACTER', field: edit.formula !== undefined ? 'formula' : 'value' },
      });
    }
    expect(await storedContent(id)).toBe(before);
    // A paired surrogate (an emoji) is ordinary text.
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'A1', value: '😀' })).data).toEqual({ v: '😀' });
  });

  it('a socket edit that would take the sheet past the content limit (10 MiB of UTF-8) is 413 PAYLOAD_TOO_LARGE and nothing is stored', async () => {
    const id = (await create(a, 'sheets', { name: 'Near the limit' })).json().data.document.id;
    const cells: Record<string, { v: string }> = {};
    for (let r = 1; r <= 327; r++) cells[`A${r}`] = { v: 'x'.repeat(32_000) };
    const near = JSON.stringify({ sheets: [{ name: 'Sheet1', cells }] });
    // Under the limit, but not by the 98,304 bytes of the edit below.
    expect(Buffer.byteLength(near)).toBeLessThan(10 * 1024 * 1024);
    expect(Buffer.byteLength(near)).toBeGreaterThan(10 * 1024 * 1024 - 98_304);
    expect((await putContent(id, near)).statusCode).toBe(200);
    const s = await openSheetSession(t.platform, a.token, id);
    await expect(editCell(t.platform, s, { sheet: 0, cell: 'B1', value: '€'.repeat(32_768) })).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE', details: { field: 'content', maxBytes: 10 * 1024 * 1024 },
    });
    expect(await storedContent(id)).toBe(near);
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'B1', value: 'small' })).data).toEqual({ v: 'small' });
    // A sheet already past the limit (written before the limit held) can still be shrunk over the socket.
    const over = JSON.stringify({ sheets: [{ name: 'Sheet1', cells: { ...cells, B1: { v: 'y'.repeat(32_000) } } }] });
    expect(Buffer.byteLength(over)).toBeGreaterThan(10 * 1024 * 1024);
    await t.platform.db.sys.exec(`UPDATE documents SET content = $2 WHERE id = $1`, [id, over]);
    await editCell(t.platform, s, { sheet: 0, cell: 'A1' });
    expect(Buffer.byteLength(await storedContent(id))).toBeLessThan(Buffer.byteLength(over));
    await expect(editCell(t.platform, s, { sheet: 0, cell: 'C1', value: '€'.repeat(32_768) })).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('PUT of sheet content with an escaped NUL or unpaired surrogate in the JSON is 400 VALIDATION_ERROR (UNSTORABLE_CHARACTER)', async () => {
    const id = (await create(a, 'sheets', { name: 'PUT NUL' })).json().data.document.id;
    const before = await storedContent(id);
    const nul = errorOf(await putContent(id, '{"sheets":[{"name":"S","cells":{"A1":{"v":"a\\u0000b"}}}]}'), 400, 'VALIDATION_ERROR');
    expect(nul).toMatchObject({ message: 'Field "content" must not contain the NUL character (\\u0000), which cannot be stored (at sheets[0].cells.A1.v)',
      details: { reason: 'UNSTORABLE_CHARACTER', field: 'content', path: 'sheets[0].cells.A1.v' } });
    const sur = errorOf(await putContent(id, '{"sheets":[{"name":"S\\ud800","cells":{}}]}'), 400, 'VALIDATION_ERROR');
    expect(sur.details).toMatchObject({ reason: 'UNSTORABLE_CHARACTER', field: 'content', path: 'sheets[0].name' });
    expect(await storedContent(id)).toBe(before);
  });

  it('csv and tsv exports never write a NUL byte, even for content stored before the check: U+FFFD stands in for it', async () => {
    const id = (await create(a, 'sheets', { name: 'Old NUL' })).json().data.document.id;
    const old = { sheets: [{ name: 'S', cells: { A1: { v: 'h' }, A2: { v: 'a\u0000b' }, B2: { f: '=A2&"\u0000"' }, A3: { v: '\u0000=cmd' } } }] };
    await t.platform.db.sys.exec(`UPDATE documents SET content = $2 WHERE id = $1`, [id, JSON.stringify(old)]);
    for (const q of ['format=csv&sheet_id=0', 'format=tsv&sheet_id=0', 'format=csv&sheet_id=0&value_mode=raw']) {
      const r = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&${q}` });
      expect(r.statusCode).toBe(200);
      expect(r.rawPayload.includes(0)).toBe(false);
      expect(r.body).toContain('a\ufffdb');
    }
    const csv = (await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=csv&sheet_id=0` })).body;
    expect(csv).toBe('h,\r\na\ufffdb,a\ufffdb\ufffd\r\n\ufffd=cmd,\r\n');
    const xlsx = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=xlsx` });
    expect(xlsx.statusCode).toBe(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    expect(book.worksheets[0].getCell('A2').value).toBe('a\ufffdb');
  });
});

describe("cells outside Excel's grid (A1 to XFD1048576)", () => {
  it('a socket edit or a PUT of a cell past column XFD or row 1048576 is 400 VALIDATION_ERROR and nothing is stored; the last cell is accepted', async () => {
    const id = (await create(a, 'sheets', { name: 'Grid edge' })).json().data.document.id;
    const s = await openSheetSession(t.platform, a.token, id);
    await editCell(t.platform, s, { sheet: 0, cell: 'A1', value: 'h' });
    const before = await storedContent(id);
    for (const cell of ['XFE1', 'A1048577', 'ZZZ1']) {
      await expect(editCell(t.platform, s, { sheet: 0, cell, value: 'beyond' })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR', message: '"cell" must be an A1 reference inside the grid, A1 to XFD1048576', details: { field: 'cell' },
      });
    }
    const put = errorOf(await putContent(id, { sheets: [{ name: 'S', cells: { A1: { v: 'h' }, XFE2: { v: 1 } } }] }), 400, 'VALIDATION_ERROR');
    expect(put).toMatchObject({ message: 'Bad cell XFE2: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object', details: { field: 'content' } });
    expect(await storedContent(id)).toBe(before);
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'XFD1048576', value: 'corner' })).data).toEqual({ v: 'corner' });
  });

  it('a formula reading a cell outside the grid is an error value, and the sheet still exports as xlsx', async () => {
    const id = (await create(a, 'sheets', { name: 'Grid formula' })).json().data.document.id;
    expect((await putContent(id, { sheets: [{ name: 'S', cells: { A1: { v: 2 }, B1: { f: '=XFE1+A1' } } }] })).statusCode).toBe(200);
    const csv = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=csv&sheet_id=0` });
    expect(csv.body.trim()).toBe('2,#ERROR!');
    const xlsx = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=xlsx` });
    expect(xlsx.statusCode).toBe(200);
  });
});

describe('xlsx export of any workbook the model accepts', () => {
  const xlsxOf = async (content: unknown) => {
    const id = (await create(a, 'sheets', { name: `Xlsx ${Math.random()}` })).json().data.document.id;
    expect((await putContent(id, content)).statusCode).toBe(200);
    const r = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=xlsx` });
    expect(r.statusCode).toBe(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(r.rawPayload as unknown as ArrayBuffer);
    return { book, raw: r.rawPayload };
  };

  it('sheet names Excel refuses (duplicates in any case, "History", apostrophes at the ends, over 31 characters) are made legal and unique', async () => {
    const long = 'This sheet name is much longer than thirty-one';
    const names = ['Dup', 'dup', 'X', 'X', 'a/b', 'a:b', '', 'Sheet', 'History', "'quoted'", `${long} A`, `${long} B`, 'Tab\u0001x'];
    const { book } = await xlsxOf({ sheets: names.map((name) => ({ name, cells: {} })) });
    expect(book.worksheets.map((w) => w.name)).toEqual([
      'Dup', 'dup (2)', 'X', 'X (2)', 'a_b', 'a_b (2)', 'Sheet', 'Sheet (2)', 'History_', "_quoted_", long.slice(0, 31), `${long.slice(0, 27)} (2)`, 'Tab_x',
    ]);
  });

  it('U+FFFE and U+FFFF become U+FFFD in values and sheet names, so the file stays well-formed XML', async () => {
    const { book, raw } = await xlsxOf({ sheets: [{ name: 'N\uffff', cells: { A1: { v: 'h' }, A2: { v: 'a\ufffeb' } } }] });
    expect(raw.includes(Buffer.from('\ufffe'))).toBe(false);
    expect(raw.includes(Buffer.from('\uffff'))).toBe(false);
    expect(book.worksheets[0]!.name).toBe('N\ufffd');
    expect(book.worksheets[0]!.getCell('A2').value).toBe('a\ufffdb');
  });

  it('without the header row, raw formulas move up with their rows: references shift, one into row 1 is #REF!, text in quotes stays', async () => {
    const id = (await create(a, 'sheets', { name: 'No header raw' })).json().data.document.id;
    await putContent(id, { sheets: [{ name: 'S', cells: {
      A1: { v: 'Header' }, A2: { v: 5 }, A3: { f: '=A2*2' }, B2: { f: '=SUM(A2:A3)' }, B3: { f: '=SUM(A1:A3)&"A2"' }, C2: { f: '=A1' }, D2: { f: '=CONCAT("concat(",A2)' },
    } }] });
    const r = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=xlsx&header_row=false&value_mode=raw` });
    expect(r.statusCode).toBe(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(r.rawPayload as unknown as ArrayBuffer);
    const ws = book.worksheets[0]!;
    const formula = (c: string) => (ws.getCell(c).value as { formula: string }).formula;
    expect([formula('A2'), formula('B1'), formula('B2'), formula('C1')]).toEqual(['A1*2', 'SUM(A1:A2)', 'SUM(A1:A2)&"A2"', '#REF!']);
    expect(formula('D1')).toBe('_xlfn.CONCAT("concat(",A1)'); // a post-2007 function as the file format wants it; text untouched
    expect(ws.getCell('A1').value).toBe(5);
  });

  it('a formula that overflows is #ERROR! (like =0/0) in the socket, csv and xlsx: no Infinity', async () => {
    const content = { sheets: [{ name: 'S', cells: { A1: { v: 'h' }, A2: { f: '=1e308*10' }, A3: { f: '=-1e308*10' }, A4: { f: '=0/0' }, A5: { v: 1e308 }, A6: { f: '=SUM(A5,A5)' } } }] };
    const { book } = await xlsxOf(content);
    expect(['A2', 'A3', 'A4', 'A6'].map((c) => book.worksheets[0]!.getCell(c).value)).toEqual(Array(4).fill('#ERROR!'));
    const id = (await create(a, 'sheets', { name: 'Overflow csv' })).json().data.document.id;
    await putContent(id, content);
    const csv = (await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=csv&sheet_id=0` })).body;
    expect(csv.split('\r\n')).toEqual(['h', '#ERROR!', '#ERROR!', '#ERROR!', '1e+308', '#ERROR!', '']);
    const s = await openSheetSession(t.platform, a.token, id);
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'B1', formula: '=A5*A5' })).display).toMatchObject({ B1: '#ERROR!' });
    // A formula reading an error is an error (a SUM does not skip it as text); text typed as "#ERROR!" is text.
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'B2', formula: '=SUM(A2,1)' })).display).toMatchObject({ B2: '#ERROR!' });
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'B3', formula: '=CONCAT("x",A4)' })).display).toMatchObject({ B3: '#ERROR!' });
    await editCell(t.platform, s, { sheet: 0, cell: 'C1', value: '#ERROR!' });
    expect((await editCell(t.platform, s, { sheet: 0, cell: 'B4', formula: '=SUM(C1,2)' })).display).toMatchObject({ B4: 2 });
  });
});

describe('xlsx formula injection', () => {
  it('the formula language is recognised without evaluating: its nine functions, operators, references in the grid, up to 8,192 characters', () => {
    const ours = ['=SUM(A1:B2)', '=sum(A1)', '=AVERAGE(A1,2)', '=MIN(1)', '=MAX(A1:A2)', '=COUNT(A1:A3)', '=IF(A1>1,"big","small")', '=ROUND(2.345,2)',
      '=ABS(-1)', '=CONCAT("a",A1)', '=1/0', '=-A1^2&"x"', '=(1 + 2)*3<>4', '=TRUE', '=XFD1048576', '="a ""quoted"" |text!"', `=${'1+'.repeat(4095)}1`];
    const others = ["=cmd|' /C calc'!A0", '=HYPERLINK("http://evil.example","x")', '=WEBSERVICE("http://evil.example")', '=SUM(A1', '=A1 B1', '=$A$1',
      '=XFE1+1', '=', "=1+'x'", '=SUM (A1)', '=@A1', '=NOPE(1)', 'SUM(A1)', `=${'1+'.repeat(4095)}10`];
    expect(ours.filter((f) => !isSheetFormula(f))).toEqual([]);
    expect(others.filter((f) => isSheetFormula(f))).toEqual([]);
  });

  it('a raw xlsx export writes a formula outside the language (a DDE payload, HYPERLINK) as the text it is, not as a live formula', async () => {
    const dde = "=cmd|' /C calc'!A0";
    const link = '=HYPERLINK("http://evil.example","x")';
    const id = (await create(a, 'sheets', { name: 'DDE' })).json().data.document.id;
    expect((await putContent(id, { sheets: [{ name: 'S', cells: { A1: { f: dde }, A2: { f: link }, A3: { f: '=SUM(B1:B2)' }, B1: { v: 1 }, B2: { v: 2 } } }] })).statusCode).toBe(200);
    const cellsOf = async (q: string) => {
      const r = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=xlsx&${q}` });
      expect(r.statusCode).toBe(200);
      const book = new ExcelJS.Workbook();
      await book.xlsx.load(r.rawPayload as unknown as ArrayBuffer);
      return ['A1', 'A2', 'A3'].map((c) => book.worksheets[0]!.getCell(c).value);
    };
    expect(await cellsOf('value_mode=raw')).toEqual([dde, link, { formula: 'SUM(B1:B2)', result: 3 }]);
    // Without the header row the text is still written as stored; the formula's references move up.
    expect(await cellsOf('value_mode=raw&header_row=false')).toEqual([link, { formula: 'SUM(B1:B1)', result: 3 }, null]);
    expect(await cellsOf('value_mode=displayed')).toEqual(['#ERROR!', '#ERROR!', 3]);
  });
});

describe('formula cycles', () => {
  it('direct and indirect cycles display #CYCLE!, and so do cells that depend on one, whatever the order of evaluation', () => {
    const cells = { C2: { f: '=C2+1' }, A1: { f: '=B1+1' }, B1: { f: '=A1*2' }, D1: { f: '=A1+1' }, E1: { f: '=C2&"x"' }, F1: { f: '=SUM(A1:B1)' }, G1: { v: 5 }, G2: { f: '=G1*2' }, H1: { f: '=1/0+A1' } };
    const expected = { C2: '#CYCLE!', A1: '#CYCLE!', B1: '#CYCLE!', D1: '#CYCLE!', E1: '#CYCLE!', F1: '#CYCLE!', G1: 5, G2: 10, H1: '#ERROR!' };
    for (const order of [Object.keys(cells), Object.keys(cells).reverse()]) {
      const v = evaluate({ name: 's', cells });
      expect(Object.fromEntries(order.map((r) => [r, v(r)]))).toEqual(expected);
    }
    expect(sheetRows({ name: 's', cells: { A1: { f: '=A1' }, B1: { f: '=A1+1' } } }, 'displayed')).toEqual([['#CYCLE!', '#CYCLE!']]);
  });

  it('a self-referencing formula set over the socket displays #CYCLE!, in the edit answer and in exports', async () => {
    const id = (await create(a, 'sheets', { name: 'Cycles' })).json().data.document.id;
    const s = await openSheetSession(t.platform, a.token, id);
    await editCell(t.platform, s, { sheet: 0, cell: 'A1', value: 'x' });
    const r = await editCell(t.platform, s, { sheet: 0, cell: 'C2', formula: '=C2+1' });
    expect(r.display).toEqual({ C2: '#CYCLE!' });
    const csv = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=csv&sheet_id=0` });
    expect(csv.body).toBe('x,,\r\n,,#CYCLE!\r\n');
    const xlsx = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=xlsx` });
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    expect(book.worksheets[0].getCell('C2').value).toBe('#CYCLE!');
  });
});

describe('formula chains', () => {
  // Listed bottom-up, so the last link is asked first (a running total filled upwards): deeper than the call stack.
  const chain = (links: number, first: { v?: number; f?: string }) => {
    const cells: Record<string, { v?: number; f?: string }> = {};
    for (let r = links; r >= 2; r--) cells[`A${r}`] = { f: `=A${r - 1}+1` };
    cells.A1 = first;
    return cells;
  };

  it('a chain of 20,000 formulas has its value whichever cell is asked first, alone or through a range', () => {
    const cells = { ...chain(20_000, { v: 1 }), B1: { f: '=SUM(A19998:A20000)' } };
    const v = evaluate({ name: 's', cells });
    expect(v('B1')).toBe(19_998 + 19_999 + 20_000);
    expect(v('A20000')).toBe(20_000);
    expect(evaluate({ name: 's', cells })('A20000')).toBe(20_000);
  });

  it('an error or a cycle at the start of a long chain reaches its end', () => {
    expect(evaluate({ name: 's', cells: chain(20_000, { f: '=1/0' }) })('A20000')).toBe('#ERROR!');
    expect(evaluate({ name: 's', cells: chain(20_000, { f: '=A3' }) })('A20000')).toBe('#CYCLE!');
  });
});

describe('deck content', () => {
  const deck = (slides: unknown) => ({ slides });
  it('PUT of a deck validates its content: JSON, {"slides":[{id,title,body}]}, 1-1000 slides, unique ids, bounded fields', async () => {
    const id = (await create(a, 'slides', { name: 'Validated deck' })).json().data.document.id;
    const before = await storedContent(id);
    const bad: Array<[unknown, string]> = [
      ['garbage', 'Deck content must be JSON'],
      ['', 'Deck content must be JSON'],
      ['[]', 'Deck content must be an object {"slides":[...]}'],
      ['null', 'Deck content must be an object {"slides":[...]}'],
      [{}, 'Deck content needs 1-1000 slides'],
      [deck('x'), 'Deck content needs 1-1000 slides'],
      [deck([]), 'Deck content needs 1-1000 slides'],
      [deck(Array.from({ length: 1001 }, (_, i) => ({ id: `s${i}`, title: '', body: '' }))), 'Deck content needs 1-1000 slides'],
      [deck(['s1']), 'Slide 0 must be an object with id, title and body'],
      [deck([{ title: '', body: '' }]), 'Slide 0 needs an "id" of 1-100 characters'],
      [deck([{ id: '', title: '', body: '' }]), 'Slide 0 needs an "id" of 1-100 characters'],
      [deck([{ id: 'x'.repeat(101), title: '', body: '' }]), 'Slide 0 needs an "id" of 1-100 characters'],
      [deck([{ id: 's1', title: '', body: '' }, { id: 's1', title: '', body: '' }]), 'Slide 1 repeats the id "s1"'],
      [deck([{ id: 's1', body: '' }]), 'Slide 0 needs a "title" of at most 500 characters'],
      [deck([{ id: 's1', title: 3, body: '' }]), 'Slide 0 needs a "title" of at most 500 characters'],
      [deck([{ id: 's1', title: 'x'.repeat(501), body: '' }]), 'Slide 0 needs a "title" of at most 500 characters'],
      [deck([{ id: 's1', title: '' }]), 'Slide 0 needs a "body" text'],
      [deck([{ id: 's1', title: '', body: { text: 'x' } }]), 'Slide 0 needs a "body" text'],
    ];
    for (const [content, message] of bad) {
      expect(errorOf(await putContent(id, content), 400, 'VALIDATION_ERROR')).toMatchObject({ message, details: { field: 'content' } });
    }
    const nul = errorOf(await putContent(id, '{"slides":[{"id":"s1","title":"t","body":"a\\u0000"}]}'), 400, 'VALIDATION_ERROR');
    expect(nul.details).toMatchObject({ reason: 'UNSTORABLE_CHARACTER', field: 'content', path: 'slides[0].body' });
    expect(await storedContent(id)).toBe(before);
    // Valid decks are stored as sent; 500 emoji are a 500-character title.
    const good = JSON.stringify(deck([{ id: 's1', title: '😀'.repeat(500), body: 'Hello\n- one' }, { id: 's2', title: 'Two', body: '', notes: 'kept' }]));
    const ok = await putContent(id, good);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.content).toBe(good);
    // A plain document's content is free text, as before.
    const plain = (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'plain' } })).json().data.id;
    expect((await putContent(plain, 'garbage')).statusCode).toBe(200);
  });
});

describe('nesting of sheet and deck content', () => {
  it('content nested deeper than JSON_MAX_DEPTH is 400 VALIDATION_ERROR (TOO_DEEP), not a 500 of a stack overflow; 32 levels are taken', async () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const sheet = (await create(a, 'sheets', { name: 'Deep sheet' })).json().data.document.id;
    const deck = (await create(a, 'slides', { name: 'Deep deck' })).json().data.document.id;
    const sheetWith = (extra: string) => `{"sheets":[{"name":"S","cells":{"A1":{"v":"x"}},"extra":${extra}}]}`;
    const deckWith = (notes: string) => `{"slides":[{"id":"s1","title":"t","body":"b","notes":${notes}}]}`;
    const before = [await storedContent(sheet), await storedContent(deck)];
    // 6,000 levels overflowed the stack of the storable-text walk (500 INTERNAL_ERROR); 33 is one past the bound.
    for (const n of [6000, 100_000, 30]) {
      for (const [id, content] of [[sheet, sheetWith(nest(n))], [deck, deckWith(nest(n))]]) {
        const e = errorOf(await putContent(id, content), 400, 'VALIDATION_ERROR');
        expect(e.details).toEqual({ field: 'content', reason: 'TOO_DEEP', limit: 32 });
        expect(e.message).toBe('Field "content" nests JSON deeper than 32 levels');
      }
    }
    expect([await storedContent(sheet), await storedContent(deck)]).toEqual(before);
    // {"sheets":[{"extra": ...}]} is 3 levels, {"slides":[{"notes": ...}]} too: 29 more make 32.
    expect((await putContent(sheet, sheetWith(nest(29)))).statusCode).toBe(200);
    expect((await putContent(deck, deckWith(nest(29)))).statusCode).toBe(200);
  });
});

describe('export filename', () => {
  it('bidi and other format controls in filename are replaced like the other unsafe characters', async () => {
    const id = (await create(a, 'sheets', { name: 'Bidi' })).json().data.document.id;
    const go = (filename: string) => t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=csv&sheet_id=0&filename=${encodeURIComponent(filename)}` });
    // The ASCII fallback has one _ per character (code point), the exact name is percent-encoded UTF-8.
    const disposition = (name: string) => `attachment; filename="${name.replace(/[^\x20-\x7e]|"/gu, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;
    const cases: Array<[string, string]> = [
      ['invoice\u202Efdp.exe', 'invoice_fdp.exe.csv'],
      ['a\u200Eb\u200Fc', 'a_b_c.csv'],
      ['x\u202A\u202B\u202C\u202Dy', 'x_y.csv'],
      ['\u2066p\u2067q\u2068r\u2069', '_p_q_r_.csv'],
      ['soft\u00ADhyphen\uFEFFbom\u200Bzw\u061Calm', 'soft_hyphen_bom_zw_alm.csv'],
      ['می\u200Cخواهم 👩\u200D💻', 'می\u200Cخواهم 👩\u200D💻.csv'],
      ['c1\u0085\u009Fend', 'c1_end.csv'],
      ['Résumé 😀', 'Résumé 😀.csv'],
    ];
    for (const [filename, expected] of cases) {
      const r = await go(filename);
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-disposition']).toBe(disposition(expected));
    }
  });
});
