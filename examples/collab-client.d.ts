// Types of collab-client.js, for TypeScript callers (the tests).
import type * as Y from 'yjs';
import type { WebsocketProvider } from 'y-websocket';

export interface LiveDocument { doc: Y.Doc; text: Y.Text; provider: WebsocketProvider; close: () => void }

export function openLiveDocument(o: {
  Y: typeof Y;
  WebsocketProvider: typeof WebsocketProvider;
  WebSocketPolyfill?: unknown;
  base: string;
  token: string;
  documentId: string;
  name?: string;
  onStatus?: (status: string) => void;
}): Promise<LiveDocument>;
