import { acceptBodilessPost } from '../http/empty-post.ts';
import type { RawRouteMount } from './index.ts';

/** The poller is called by cron jobs that POST with no body and no content type. */
export const mountEmailEventsPollShim: RawRouteMount = (app) => acceptBodilessPost(app, '/internal/email-events/poll');
