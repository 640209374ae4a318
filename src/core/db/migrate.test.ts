import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { MIGRATIONS_DIR, migrate } from './migrate.js';
import { assertAppRole } from './app-role.js';

/**
 * The runner applies each file once, by name, and never looks at it again: a file edited after a database applied it
 * leaves that database without the change, and a later file relying on it fails there (0067 once called a function
 * that an edit had moved into 0065: every database that had applied the first 0065 could not start). So applied
 * files never change; migrations.sha256 (the output of `sha256sum *.sql` in migrations/) holds what each one is.
 */
describe('migrations', () => {
  const manifest = new Map(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations.sha256'), 'utf8')
    .trim().split('\n').map((line) => { const [hash, file] = line.split(/\s+/); return [file, hash] as const; }));
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();

  it('no migration changes once committed, and every one is in migrations.sha256', () => {
    const problems = files.flatMap((file) => {
      const hash = createHash('sha256').update(readFileSync(path.join(MIGRATIONS_DIR, file))).digest('hex');
      const known = manifest.get(file);
      if (known === undefined) return [`${file} is new: add its line (cd migrations && sha256sum ${file} >> ../src/core/db/migrations.sha256)`];
      return known === hash ? [] : [`${file} changed after it was committed: databases that applied it never see the change; restore it and put the change in a new migration`];
    });
    const gone = [...manifest.keys()].filter((file) => !files.includes(file)).map((file) => `${file} was removed: databases applied it; restore it`);
    expect([...problems, ...gone]).toEqual([]);
  });

  describe('upgrades', () => {
    let url: string;
    const name = `platform_migrate_${process.pid}_${Date.now().toString(36)}`;
    const admin = () => new pg.Client({ connectionString: inject('databaseUrl') });
    const run = async <T extends pg.QueryResultRow>(text: string): Promise<T[]> => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try { return (await c.query<T>(text)).rows; } finally { await c.end(); }
    };

    beforeAll(async () => {
      const c = admin();
      await c.connect();
      try { await c.query(`CREATE DATABASE ${name}`); } finally { await c.end(); }
      const u = new URL(inject('databaseUrl'));
      u.pathname = `/${name}`;
      url = u.toString();
      await migrate(url);
    });
    afterAll(async () => {
      const c = admin();
      await c.connect();
      try { await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); } finally { await c.end(); }
    });

    it('a database that applied 0065 before 0067 existed (no app_unicode_lower) upgrades: 0067 defines what it uses', async () => {
      await run(`DROP FUNCTION app_unicode_lower(text); DELETE FROM schema_migrations WHERE name = '0067_documents_search_unicode_lowercase.sql'`);
      expect(await migrate(url)).toEqual(['0067_documents_search_unicode_lowercase.sql']);
      expect(await run(`SELECT app_unicode_lower('ÉLAN ПРИВЕТ') AS folded`)).toEqual([{ folded: 'élan привет' }]);
      expect(await run(`SELECT app_document_content_vector('simple', 'document', 'ÉLAN') AS v`)).toEqual([{ v: "'élan':1" }]);
    });

    it('a second run applies nothing', async () => {
      expect(await migrate(url)).toEqual([]);
    });

    it('a database whose application role lacks its privileges (a dump restored before the role existed) is refused, saying what to do', async () => {
      await expect(assertAppRole(url)).resolves.toBeUndefined();
      await run(`REVOKE ALL ON projects FROM platform_app`);
      await expect(assertAppRole(url)).rejects.toThrow('The role "platform_app" lacks its privileges on this database\'s tables (a pg_dump restored before the role existed?): restore the dump again now that the role exists (README, "Backups")');
      await run(`GRANT SELECT, INSERT, UPDATE, DELETE ON projects TO platform_app`);
      await expect(assertAppRole(url)).resolves.toBeUndefined();
    });

    it('a server without the application role (a dump restored into another server) is refused, saying how to create it', async () => {
      // The role is the server's, shared with every test database: a name no server has stands in for it.
      await expect(assertAppRole(url, 'platform_app_never_created')).rejects.toThrow(
        'The database has no role "platform_app_never_created", which every request runs as (a pg_dump restored without it?): create it with CREATE ROLE platform_app_never_created NOLOGIN NOSUPERUSER NOBYPASSRLS; and restore the dump again (README, "Backups")');
    });
  });
});
