import { pino, type Logger } from 'pino';

export type Log = Logger;

/**
 * Secrets never reach a log line: any field with one of these names is
 * replaced, at any depth pino's redaction reaches.
 */
const REDACTED_PATHS = [
  'authorization',
  'token',
  'secret',
  'password',
  'apiKey',
  'api_key',
  'accessKeyId',
  'secretAccessKey',
  'sessionToken',
  'headers.authorization',
  'headers["x-proxy-secret"]',
  'headers["x-webhook-secret"]',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers["x-proxy-secret"]',
  'req.headers["x-webhook-secret"]',
  'req.headers.cookie',
  '*.authorization',
  '*.token',
  '*.secret',
  '*.password',
  '*.apiKey',
  '*.api_key',
  '*.secretAccessKey',
  '*.sessionToken',
  'config.secrets',
  'config.auth.jwtSecret',
];

export function createLog(options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {}): Log {
  return pino(
    {
      name: options.name ?? 'folio',
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      base: { pid: process.pid },
    },
    options.destination as never,
  );
}

/** A logger that writes nothing, for tests and library callers that pass none. */
export const silentLog: Log = pino({ level: 'silent' });
