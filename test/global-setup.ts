import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPg } from '../src/core/db/embedded.js';
import { migrate } from '../src/core/db/migrate.js';
import { loadConfig } from '../src/core/config.js';
import { startPlatform } from '../src/core/platform.js';
import { ensureRoot } from '../src/areas/accounts/root.service.js';
import { generateApiKey } from '../src/core/auth/api-key-format.js';

declare module 'vitest' {
  export interface ProvidedContext { databaseUrl: string; encryptionKey: string; rootApiKey: string; dataDir: string }
}

/**
 * One fresh database per test run: on the embedded server by default, on DATABASE_URL's server when set.
 * Tests isolate by creating tenants, so files share it and run in parallel.
 */
export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-test-'));
  let embedded: EmbeddedPg | null = null;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embedded = await startEmbeddedPostgres({ dataDir, port: 0 });
    serverUrl = embedded.url;
  }
  const dbName = `platform_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  await migrate(databaseUrl);

  const encryptionKey = randomBytes(32).toString('hex');
  const rootApiKey = generateApiKey().key;
  const config = loadConfig({ NODE_ENV: 'test' }, { databaseUrl, encryptionKey, rootApiKey, dataDir, logLevel: 'silent' });
  const running = await startPlatform(config, { info() {}, warn() {}, error() {} });
  await ensureRoot(running.platform);
  await running.close();

  project.provide('databaseUrl', databaseUrl);
  project.provide('encryptionKey', encryptionKey);
  project.provide('rootApiKey', rootApiKey);
  project.provide('dataDir', dataDir);

  return async () => {
    if (embedded) await embedded.stop();
    else {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
      await c.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
}
