import { parseArgs } from 'node:util';
import { loadConfig } from './core/config.js';
import { migrate } from './core/db/migrate.js';
import { startEmbeddedPostgres } from './core/db/embedded.js';

export const USAGE = `Usage: platform <command> [options]

Commands:
  serve                         Start the API server (PORT, DATA_DIR, DATABASE_URL...)
  migrate                       Apply database migrations and exit
  --help                        Show this help

Every command accepts --json for machine-readable output.
`;

/** Entry point of the `platform` command (bin/platform.mjs). */
export async function main(argv: string[]): Promise<void> {
  const [command] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') { process.stdout.write(USAGE); return; }
  if (command === 'serve') { const { serve } = await import('./server.js'); await serve(); return; }
  if (command === 'migrate') {
    const { values } = parseArgs({ args: argv.slice(1), options: { json: { type: 'boolean' } }, allowPositionals: false });
    const config = loadConfig();
    const embedded = config.databaseUrl ? null : await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort });
    try {
      const applied = await migrate(config.databaseUrl ?? embedded!.url);
      process.stdout.write(values.json ? JSON.stringify({ applied }) + '\n' : applied.length ? `Applied: ${applied.join(', ')}\n` : 'Database is up to date.\n');
    } finally { await embedded?.stop(); }
    return;
  }
  process.stderr.write(`Unknown command "${command}".\n\n${USAGE}`);
  process.exitCode = 2;
}
