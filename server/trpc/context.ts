import type { Request, Response } from 'express';
import type { Deps } from '../deps.ts';
import type { AuthUser } from '../auth/users.ts';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { AppServices } from '../services.ts';

/** Everything a request handler can reach: the app's dependencies, the request, and lazily the user. */
export type AppContext = {
  deps: AppDeps;
  req: Request;
  res: Response;
  requestId: string;
  log: Deps['log'];
};

/** Deps plus the request-facing services built once per app. */
export type AppDeps = Deps & {
  verifyToken: TokenVerifier;
  services: AppServices;
};

export type AuthedContext = AppContext & { user: AuthUser };
