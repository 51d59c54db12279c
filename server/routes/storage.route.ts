import { acceptBodilessPost } from '../http/empty-post.ts';
import type { RawRouteMount } from './index.ts';

/** A connection's test, and an import of the whole connection prefix, take no body. */
export const mountStorageBodilessPosts: RawRouteMount = (app) => acceptBodilessPost(app, /^\/api\/storage\/connections\/[^/]+\/(test|import)$/);
