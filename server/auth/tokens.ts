import { createRemoteJWKSet, jwtVerify, SignJWT, errors as joseErrors, type JWTPayload } from 'jose';
import { DomainError } from '../errors.ts';

export type TokenVerifier = (token: string) => Promise<{ subject: string; email?: string; emailVerified?: boolean; name?: string }>;

/**
 * Verifies Bearer JWTs: HS256 with a shared secret, or any key of a JWKS URL.
 * Every failure is UNAUTHORIZED with a short reason; the token itself is never
 * echoed or logged.
 */
export function createTokenVerifier(options: { secret?: string; jwksUrl?: string; issuer?: string; audience?: string; now?: () => Date }): TokenVerifier {
  const jwks = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
  const secret = options.secret ? new TextEncoder().encode(options.secret) : undefined;
  return async (token) => {
    if (!jwks && !secret) throw new DomainError('UNAUTHORIZED', 'Sign-in is not configured on this server');
    let payload: JWTPayload;
    try {
      const verifyOptions = {
        issuer: options.issuer,
        audience: options.audience,
        currentDate: options.now?.(),
        ...(secret ? { algorithms: ['HS256'] } : {}),
      };
      ({ payload } = jwks ? await jwtVerify(token, jwks, verifyOptions) : await jwtVerify(token, secret!, verifyOptions));
    } catch (error) {
      const reason = error instanceof joseErrors.JWTExpired ? 'Token expired' : 'Invalid token';
      throw new DomainError('UNAUTHORIZED', reason, { cause: error });
    }
    if (!payload.sub) throw new DomainError('UNAUTHORIZED', 'Token has no subject');
    return {
      subject: payload.sub,
      email: typeof payload.email === 'string' ? payload.email : undefined,
      emailVerified: payload.email_verified === true,
      name: typeof payload.name === 'string' ? payload.name : undefined,
    };
  };
}

/**
 * Signs a session token (local development, tests, the promo magic link). Its email is verified: we sign
 * only for an address whose owner we know (the link went to that inbox; the CLI is the operator's).
 */
export async function signSessionToken(secret: string, claims: { subject: string; email: string }, options: { expiresIn?: string | number; now?: Date } = {}) {
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  return new SignJWT({ email: claims.email, email_verified: true })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.subject)
    .setIssuedAt(issuedAt)
    .setExpirationTime(typeof options.expiresIn === 'number' ? issuedAt + options.expiresIn : (options.expiresIn ?? '30d'))
    .sign(new TextEncoder().encode(secret));
}
