import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, errorOf, type TestApp } from '../../../test/helpers.js';
import { invalidJsonMessage } from './json-parser.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t?.close(); });

describe('unparsable JSON bodies', () => {
  it('the answer (and so the request\'s log line) quotes nothing of the body: a password or token typed without quotes stays out', async () => {
    const bodies = ['{"email":"a@b.c","password": Hunter2Secret99}', 'rt_ShortSecretABCDEFGHIJ', 'TokOnly'];
    for (const payload of bodies) {
      for (const url of ['/v1/auth/login', '/v1/auth/refresh']) {
        const e = errorOf(await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON');
        expect(e.message).toBe('Request body is not valid JSON: an unexpected character (strings are in double quotes; values are strings, numbers, true, false, null, objects or arrays)');
      }
    }
  });

  it('says where the body went wrong when the parser names only what it expected and the position', () => {
    const messageOf = (text: string) => { try { JSON.parse(text); return ''; } catch (err) { return invalidJsonMessage((err as Error).message); } };
    expect(messageOf('{"a" 1}')).toBe("Request body is not valid JSON: Expected ':' after property name in JSON at position 5");
    expect(messageOf('{"secret":"x')).toBe('Request body is not valid JSON: Unterminated string in JSON at position 12');
    expect(messageOf('{"a":tru}')).toBe('Request body is not valid JSON: an unexpected character (strings are in double quotes; values are strings, numbers, true, false, null, objects or arrays)');
    expect(invalidJsonMessage('Unexpected end of JSON input')).toBe('Request body is not valid JSON: it ends too early');
  });
});
