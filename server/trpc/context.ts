import type { Request, Response } from 'express';
import type { Deps } from '../deps.ts';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { ConversionEvents } from '../conversion-jobs/events.ts';

/** Everything a request handler can reach: the app's dependencies, the request, and lazily the user. */
export type AppContext = {
  deps: AppDeps;
  req: Request;
  res: Response;
  requestId: string;
  log: Deps['log'];
};

/** The process's deps plus what only the API holds: the token verifier and the one LISTEN connection of the progress streams. */
export type AppDeps = Deps & {
  verifyToken: TokenVerifier;
  conversionEvents: ConversionEvents;
};
