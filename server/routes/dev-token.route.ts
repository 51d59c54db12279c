import express, { type Express, type Request } from 'express';
import { z } from 'zod';
import { signSessionToken } from '../auth/tokens.ts';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

const DevTokenRequest = z.object({
  email: z
    .string()
    .trim()
    .toLowerCase()
    .max(320)
    .regex(/^[^@\s]+@[^@\s]+$/),
});
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Only the zero-configuration local run: development, local signing secrets, a browser on this machine, no proxy in between. */
function mintingAllowed(deps: AppDeps, req: Request): boolean {
  const { config } = deps;
  return (
    config.env === 'development' &&
    !config.auth.jwtSecret &&
    !config.auth.jwksUrl &&
    req.headers['x-forwarded-for'] === undefined &&
    LOOPBACK.test(req.socket.remoteAddress ?? '')
  );
}

/**
 * POST /api/dev/token {email}: what `npm run token` prints, for the sign-in
 * page of a local development server. Anywhere else the route does not exist
 * (404), so no deployment with real secrets can mint a session.
 */
export function mountDevToken(app: Express, deps: AppDeps) {
  // The sign-in page asks first, so it offers the form only where it works.
  app.get('/api/dev/token', (req, res) => {
    if (mintingAllowed(deps, req)) res.status(204).end();
    else sendError(res, new DomainError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
  });
  app.post('/api/dev/token', express.json({ limit: '1kb' }), async (req, res) => {
    try {
      if (!mintingAllowed(deps, req)) throw new DomainError('NOT_FOUND', `No route for ${req.method} ${req.path}`);
      const body = DevTokenRequest.safeParse(req.body);
      if (!body.success) throw new DomainError('VALIDATION_FAILED', 'Give an email address');
      const secret = resolveSigningSecrets(deps.config).jwt!;
      const token = await signSessionToken(secret, { subject: `local:${body.data.email}`, email: body.data.email }, { expiresIn: '1d', now: deps.clock.now() });
      res.status(201).json({ token });
    } catch (error) {
      sendError(res, error);
    }
  });
}
