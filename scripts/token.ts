import { parseArgs } from 'node:util';
import { signSessionToken } from '../server/auth/tokens.ts';
import { loadConfig } from '../server/config.ts';
import { resolveSigningSecrets } from '../server/secrets.ts';

/**
 * `npm run token -- --email someone@example.com` prints a signed-in token on
 * its last line, for local use. It needs no database: the server creates the
 * user (with a free account) the first time the token is used.
 */
const { values } = parseArgs({ options: { email: { type: 'string' }, days: { type: 'string', default: '30' } } });
const email = values.email?.trim().toLowerCase();
if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
  console.error('usage: npm run token -- --email someone@example.com [--days 30]');
  process.exit(2);
}
const secrets = resolveSigningSecrets(loadConfig());
if (!secrets.jwt) {
  console.error('This server verifies tokens with AUTH_JWKS_URL; get a token from that identity provider instead.');
  process.exit(1);
}
console.log(await signSessionToken(secrets.jwt, { subject: `local:${email}`, email }, { expiresIn: `${Number(values.days) || 30}d` }));
