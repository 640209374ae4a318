import type { ServiceContext } from '../../../core/context.js';

/** One entry of resources/list (MCP Resource). */
export interface ResourceRef { uri: string; name: string; title?: string; description?: string; mimeType?: string }
/** One entry of resources/read `contents` (MCP TextResourceContents). */
export interface ResourceContent { uri: string; mimeType: string; text: string; _meta?: Record<string, unknown> }

/**
 * A family of resources with stable URIs `platform://<kind>/<id>`, served from an area's service functions.
 * Access is that of the tool named by `gate` (for specs: `specs.get`), so reading a resource is allowed
 * exactly when calling that tool is.
 */
export interface ResourceProvider {
  kind: string;
  /** Name of the registered tool whose gate (scope, REST route needs) applies to reading one resource. */
  gate: string;
  /**
   * The tool whose gate applies to listing them (`documents.list`): a key allowed to read one document by id
   * (`mcp:documents.get`) must not page through every title and id with resources/list.
   */
  listGate: string;
  title: string;
  description: string;
  mimeType: string;
  /**
   * Up to `limit` resources of this kind after `cursor` (null: from the start), and the cursor of the rest
   * (null at the end). The cursor is the provider's own JSON-able position; the dispatcher wraps it.
   */
  list(ctx: ServiceContext, cursor: unknown, limit: number): Promise<{ items: ResourceRef[]; next: unknown }>;
  /** The resource by id; null (or a NOT_FOUND AppError) when it does not exist or is not visible. */
  read(ctx: ServiceContext, id: string): Promise<ResourceContent | null>;
}

export const resourceUri = (kind: string, id: string) => `platform://${kind}/${id}`;

/** `platform://<kind>/<id>` → parts; null for anything else. */
export function parseResourceUri(uri: string): { kind: string; id: string } | null {
  const m = /^platform:\/\/([a-z][a-z0-9_-]*)\/([A-Za-z0-9_.:-]{1,200})$/.exec(uri);
  return m ? { kind: m[1], id: m[2] } : null;
}
