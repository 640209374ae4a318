import { readFileSync } from 'node:fs';

/**
 * The server's version, from package.json (one place to change at a release): reported by /v1/health, the OpenAPI
 * document's `info.version` and the MCP server's `serverInfo`.
 */
export const SERVER_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
