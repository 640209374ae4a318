import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { newAjv } from './validation.js';

const UPPER = '01A2013F-8B59-7418-9285-AB06932956E1';
const LOWER = UPPER.toLowerCase();

describe('newAjv: UUIDs come out canonical', () => {
  it('lower-cases every accepted uuid: top level, nested, in arrays and in unions; other strings untouched', () => {
    const schema = Type.Object({
      id: Type.String({ format: 'uuid' }),
      title: Type.String(),
      parent: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      depends_on: Type.Array(Type.String({ format: 'uuid' })),
      owner: Type.Object({ user_id: Type.String({ format: 'uuid' }), note: Type.String() }),
    });
    const validate = newAjv(false).compile(schema);
    const data = { id: UPPER, title: 'KEEP Case', parent: UPPER, depends_on: [UPPER, LOWER], owner: { user_id: UPPER, note: 'ABC' } };
    expect(validate(data)).toBe(true);
    expect(data).toEqual({ id: LOWER, title: 'KEEP Case', parent: LOWER, depends_on: [LOWER, LOWER], owner: { user_id: LOWER, note: 'ABC' } });
    const nulls = { id: LOWER, title: 't', parent: null, depends_on: [], owner: { user_id: LOWER, note: '' } };
    expect(validate(nulls)).toBe(true);
    expect(nulls.parent).toBeNull();
  });

  it('lower-cases only UUIDs: in a union with another string, that string is kept as sent', () => {
    const validate = newAjv(false).compile(Type.Object({ ref: Type.Union([Type.String({ format: 'uuid' }), Type.String({ pattern: '^[A-Za-z]+$' })]) }));
    const named = { ref: 'MyProject' };
    const id = { ref: UPPER };
    expect([validate(named), validate(id)]).toEqual([true, true]);
    expect([named.ref, id.ref]).toEqual(['MyProject', LOWER]);
  });

  it('leaves a refused value as sent and reports the error', () => {
    const validate = newAjv(true).compile(Type.Object({ id: Type.String({ format: 'uuid' }) }));
    const data = { id: `urn:uuid:${UPPER}` };
    expect(validate(data)).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'format', params: { format: 'uuid' } });
    expect(data.id).toBe(`urn:uuid:${UPPER}`);
  });
});
