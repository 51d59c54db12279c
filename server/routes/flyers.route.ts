import { acceptBodilessPost } from '../http/empty-post.ts';
import type { RawRouteMount } from './index.ts';

/** A flyer job's cancel and comped reflow take no body. */
export const mountFlyerBodilessPosts: RawRouteMount = (app) => acceptBodilessPost(app, /^\/api\/flyers\/[^/]+\/(cancel|comped-reflow)$/);
