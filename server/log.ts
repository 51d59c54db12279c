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

/** pino's number for `fatal`. */
const FATAL_LEVEL = 60;

/** The message and error of a log call's arguments, as pino reads them ((obj, msg), (err, msg) or (msg)). */
function describeCall(args: unknown[]): { message: string; error?: string } {
  const [first, second] = args;
  if (typeof first === 'string') return { message: first };
  const fields = (first ?? {}) as { err?: unknown; error?: unknown; msg?: unknown };
  const cause = first instanceof Error ? first : (fields.err ?? fields.error);
  const error = cause instanceof Error ? `${cause.name}: ${cause.message}` : typeof cause === 'string' ? cause : undefined;
  const message = typeof second === 'string' ? second : typeof fields.msg === 'string' ? fields.msg : (error ?? 'fatal');
  return { message, ...(error ? { error } : {}) };
}

export function createLog(
  options: {
    level?: string;
    name?: string;
    destination?: NodeJS.WritableStream;
    /** Called for every fatal line (the out-of-band alert transport); must not throw or log at fatal. */
    onFatal?: (line: { message: string; error?: string }) => unknown;
  } = {},
): Log {
  const onFatal = options.onFatal;
  return pino(
    {
      name: options.name ?? 'folio',
      level: options.level ?? 'info',
      ...(onFatal
        ? {
            hooks: {
              logMethod(args, method, level) {
                if (level >= FATAL_LEVEL)
                  Promise.resolve()
                    .then(() => onFatal(describeCall(args)))
                    .catch(() => {});
                method.apply(this, args);
              },
            },
          }
        : {}),
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      base: { pid: process.pid },
    },
    options.destination as never,
  );
}

/** A logger that writes nothing, for tests and library callers that pass none. */
export const silentLog: Log = pino({ level: 'silent' });
