import type { ResourceProvider } from './define.js';
import { specsResources } from './specs.resources.js';
import { documentsResources } from './documents.resources.js';

/** Every resource family, in listing order (resources/list walks them one after another). */
export const RESOURCE_PROVIDERS: ResourceProvider[] = [
  specsResources,
  documentsResources,
];
