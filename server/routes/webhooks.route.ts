import { acceptBodilessPost } from '../http/empty-post.ts';
import type { RawRouteMount } from './index.ts';

/** A webhook's rotate-secret and test take no body. */
export const mountWebhookBodilessPosts: RawRouteMount = (app) => acceptBodilessPost(app, /^\/api\/webhooks\/[^/]+\/(rotate-secret|test)$/);
