import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { loadConfig } from '../../core/config.js';
import { ensureRoot } from './root.service.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t?.close(); });

describe('the root super-admin settings', () => {
  it('a ROOT_ADMIN_PASSWORD outside the password rule stops the start (the rule every user gets)', async () => {
    const previous = process.env.ROOT_ADMIN_PASSWORD;
    process.env.ROOT_ADMIN_PASSWORD = 'short';
    try {
      await expect(ensureRoot(t.platform)).rejects.toThrow(new Error('ROOT_ADMIN_PASSWORD must be 12 to 256 characters, at least 5 of them different'));
    } finally {
      if (previous === undefined) delete process.env.ROOT_ADMIN_PASSWORD; else process.env.ROOT_ADMIN_PASSWORD = previous;
    }
  });

  it('ROOT_ADMIN_EMAIL must be an e-mail address', () => {
    expect(loadConfig({ ROOT_ADMIN_EMAIL: 'Ops@Example.com' }).rootAdminEmail).toBe('ops@example.com');
    expect(loadConfig({}).rootAdminEmail).toBe('admin@localhost');
    for (const bad of ['notanemail', 'a b@c', '@x', 'x@']) expect(() => loadConfig({ ROOT_ADMIN_EMAIL: bad }), bad).toThrow(new Error(`ROOT_ADMIN_EMAIL must be an e-mail address, got "${bad}"`));
  });
});
