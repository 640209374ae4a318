// Live editing from Node: two editors ("Alice" and "Bob") open one document through the collaboration socket with
// the stock y-websocket client, each types a line, both end with the same text, and the document's `content` (REST)
// follows. The connection logic is examples/collab-client.js, the same the browser page examples/collab.html runs.
//
//   PLATFORM_URL=http://localhost:8080 PLATFORM_TOKEN=<access token or API key with documents:write> \
//     DOCUMENT_ID=<id of a document> node examples/collab-node.mjs
//
// Run it from the repository (it uses the yjs, y-websocket and ws packages `npm ci` installed). Prints each step and
// ends with OK (exit code 0), or with what went wrong (exit code 1).
import * as Y from 'yjs';
import { WebsocketProvider } from 'y-websocket';
import WebSocket from 'ws';
import { openLiveDocument } from './collab-client.js';

const base = (process.env.PLATFORM_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
const token = process.env.PLATFORM_TOKEN;
const documentId = process.env.DOCUMENT_ID;
if (!token || !documentId) {
  console.error('Set PLATFORM_TOKEN (an access token, or an API key with documents:write) and DOCUMENT_ID (see the comment at the top).');
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Waits until `check()` holds, up to 10 s. */
async function until(what, check) {
  for (const end = Date.now() + 10_000; !check(); await sleep(50)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}
const editor = (name) => openLiveDocument({ Y, WebsocketProvider, WebSocketPolyfill: WebSocket, base, token, documentId, name, onStatus: (s) => console.log(`${name}: ${s}`) });

let alice;
let bob;
try {
  alice = await editor('Alice');
  bob = await editor('Bob');
  await until('both editors to sync', () => alice.provider.synced && bob.provider.synced);
  await until('each editor to see the other', () => [alice, bob].every((e) => e.provider.awareness.getStates().size === 2));
  console.log(`both connected; the text is ${JSON.stringify(alice.text.toString())}`);
  alice.text.insert(alice.text.length, '\nAlice was here.');
  bob.text.insert(bob.text.length, '\nBob too.');
  await until('both editors to have both lines', () => [alice, bob].every((e) => e.text.toString().includes('Alice was here.') && e.text.toString().includes('Bob too.')));
  if (alice.text.toString() !== bob.text.toString()) throw new Error('the two editors ended with different texts');
  console.log(`both editors show ${JSON.stringify(alice.text.toString())}`);
  // The server writes the text back to the document's `content` shortly after edits stop (docs/documents.md).
  const content = async () => (await (await fetch(`${base}/v1/documents/${documentId}`, { headers: { authorization: `Bearer ${token}` } })).json()).data?.content;
  for (const end = Date.now() + 10_000; (await content()) !== alice.text.toString(); await sleep(200)) {
    if (Date.now() > end) throw new Error('GET /v1/documents/{id} did not show the text within 10 s');
  }
  console.log('GET /v1/documents/{id} has the same content');
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
} finally {
  alice?.close();
  bob?.close();
}
if (!process.exitCode) console.log('OK');
