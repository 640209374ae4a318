/**
 * Live editing of one document with a stock y-websocket client: what examples/collab.html (in a browser) and
 * examples/collab-node.mjs (in Node) both run. Yjs and y-websocket are passed in: the page loads them from a CDN,
 * Node from node_modules.
 *
 * What a client of this server has to do beyond y-websocket's defaults (docs/documents.md, "Collaboration"):
 * - the document's text is the Y.Text named "content";
 * - every connection needs a fresh ticket (POST /v1/collaboration/ticket, single use, 60 s), so y-websocket's own
 *   reconnect, which would reuse the spent one, is replaced by one that fetches a ticket first;
 * - a close code 4400-4499 means "do not reconnect" (4404: the document was deleted; 4401/4403: access ended);
 * - a refused connection (a browser sees no HTTP status: a wrong id, the node's limits answering 429/503 "try again
 *   later") is retried with a growing pause, and the document is checked over REST first, which names the problem.
 *
 * @param {object} o
 * @param {typeof import('yjs')} o.Y
 * @param {typeof import('y-websocket').WebsocketProvider} o.WebsocketProvider
 * @param {unknown} [o.WebSocketPolyfill] Node: the `ws` package's WebSocket
 * @param {string} o.base API base URL, e.g. http://localhost:8080
 * @param {string} o.token access token or API key (documents:write for a write socket)
 * @param {string} o.documentId id of a document of kind "document"
 * @param {string} [o.name] shown to the other editors (awareness)
 * @param {(status: string) => void} [o.onStatus] connection news, for a status line
 * @returns {Promise<{ doc: import('yjs').Doc, text: import('yjs').Text, provider: import('y-websocket').WebsocketProvider, close: () => void }>}
 *   rejects (nothing opened) when the document cannot be opened: the API's message says why
 */
export async function openLiveDocument({ Y, WebsocketProvider, WebSocketPolyfill, base, token, documentId, name = 'Guest', onStatus = () => {} }) {
  const api = async (method, path) => {
    const r = await fetch(`${base}${path}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, body: method === 'POST' ? '{}' : undefined,
    });
    const body = await r.json();
    if (!body.success) throw Object.assign(new Error(body.error.message), { status: r.status, code: body.error.code });
    return body.data;
  };
  const checkDocument = async () => {
    const d = await api('GET', `/v1/documents/${encodeURIComponent(documentId)}`);
    if (d.kind !== 'document') throw Object.assign(new Error(`This is a ${d.kind}, not a text document: only documents open here`), { status: 400 });
  };
  const ticket = async () => (await api('POST', '/v1/collaboration/ticket')).ticket;

  await checkDocument();
  const doc = new Y.Doc();
  const wsBase = `${base.replace(/^http/, 'ws')}/v1/collaboration/ws`;
  // No BroadcastChannel: two tabs of one browser would otherwise sync with each other without the server.
  const provider = new WebsocketProvider(wsBase, documentId, doc, { params: { ticket: await ticket() }, WebSocketPolyfill, disableBc: true });
  provider.awareness.setLocalStateField('user', { name });
  let closed = false;
  let refused = 0;
  const stop = (why) => { provider.shouldConnect = false; setTimeout(() => onStatus(why)); }; // after y-websocket's own "disconnected"
  provider.on('status', ({ status }) => onStatus(status));
  provider.on('connection-close', (event) => {
    if (closed || !event) return; // closed here (close(), or y-websocket's watchdog, which reconnects itself)
    provider.shouldConnect = false; // y-websocket's retry would send the spent ticket
    if (event.code >= 4400 && event.code < 4500) { stop(`closed by the server: ${event.code} ${event.reason}`); return; }
    refused = provider.synced || event.wasClean ? 0 : refused + 1;
    void reconnect();
  });
  async function reconnect() {
    // At once after a connection that worked; after refusals, and while no ticket can be had (the server restarting,
    // an expired token), with a pause that grows to 30 s.
    for (let pause = refused ? Math.min(1000 * 2 ** refused, 30_000) : 0; !closed; pause = Math.min(Math.max(pause * 2, 1000), 30_000)) {
      if (pause) {
        onStatus(refused ? `connection refused (${refused} in a row); trying again in ${pause / 1000} s` : `trying again in ${pause / 1000} s`);
        await new Promise((r) => setTimeout(r, pause));
      }
      if (closed) return;
      try {
        if (refused) await checkDocument();
        provider.params.ticket = await ticket();
        if (!closed) provider.connect();
        return;
      } catch (e) {
        // The document is gone or was never one to open here: retrying cannot help.
        if (e.status === 404 || e.status === 400) { stop(e.message); return; }
        onStatus(e.message);
      }
    }
  }
  // The document too: its awareness keeps a timer until the document is destroyed.
  return { doc, text: doc.getText('content'), provider, close: () => { closed = true; provider.destroy(); doc.destroy(); } };
}
