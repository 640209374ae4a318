// Runs the built server (dist/) exactly as `platform serve` does, without bin/platform.mjs's rebuild check:
// `npm run bench` builds once up front, and a source edited while the bench runs must not trigger a rebuild
// (or a different build) between the two database runs.
import { existsSync } from 'node:fs';

const entry = new URL('../../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('dist/cli.js is missing: run "node bin/platform.mjs --build-only" (npm run bench does) first.\n');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(['serve']);
