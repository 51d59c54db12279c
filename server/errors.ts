/**
 * Domain errors carry a stable string code; one table maps each code to an
 * HTTP status. tRPC, REST and raw express routes all answer through it, so a
 * client sees the same { code, message } whichever door it used.
 */

const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,

  // credits
  INSUFFICIENT_CREDITS: 402,
  FREE_PAGE_LIMIT: 402,
  CUSTOMER_NOT_FOUND: 404,
  HOLD_NOT_FOUND: 404,
  HOLD_ALREADY_RESOLVED: 409,

  // conversion control
  CONVERSION_FINISHING: 409,
  CONVERSION_NOT_INTERRUPTIBLE: 409,
  NOT_BATCH_WAITING: 409,
  ALREADY_RESOLVED: 409,
  NO_ACTIVE_CONVERSION: 409,
  // figures API: the file has no finished chunked conversion (never converted, still running, or the inline DOCX path)
  FIGURES_UNAVAILABLE: 409,
  ERR_PARSER_API_KEY_INVALID: 502,
  ERR_PARSER_SUBMIT_FAILED: 502,

  // PDF input (engine and upload)
  NOT_A_PDF: 415,
  UNSUPPORTED_FILE_TYPE: 415,
  PDF_ENCRYPTED: 422,
  PDF_MALFORMED: 422,
  PDF_NO_PAGES: 422,
  PDF_TOO_MANY_PAGES: 413,
  FILE_TOO_LARGE: 413,

  // email
  EMAIL_SUPPRESSED: 422,
  EMAIL_FAILED: 500,
  ALERT_CHANNEL_UNCONFIGURED: 503,
  // alert route: channels attempted, none succeeded (the caller releases its claim and retries)
  ALERT_DELIVERY_FAILED: 502,

  // customer webhooks
  // the endpoint URL is not public HTTPS (or its host resolves to a forbidden address, or not at all)
  WEBHOOK_URL_REJECTED: 422,
  // a user (or a tenant) already has the most endpoints allowed
  TOO_MANY_WEBHOOK_ENDPOINTS: 409,

  // input from storage
  // an import URL (or a connection's endpoint) that is not public HTTPS, refused before anything is fetched
  IMPORT_URL_REJECTED: 422,
  // a user already has the most storage connections allowed
  TOO_MANY_STORAGE_CONNECTIONS: 409,
  // the customer's bucket answered an error (the AWS error code and message are in the message)
  STORAGE_ACCESS_FAILED: 502,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class DomainError extends Error {
  override name = 'DomainError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly context: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { retryable?: boolean; context?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.context = options.context ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** The body every error response carries. Internal messages never leave: a 5xx that is not a DomainError says only "Internal error". */
export type ErrorBody = { code: string; message: string; details?: unknown };

/** Seconds a client should wait before trying again (a rate limit's refusal), for the Retry-After header. */
export function retryAfterSeconds(error: unknown): number | undefined {
  const value = isDomainError(error) ? error.context.retryAfterSeconds : undefined;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}

export function toErrorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (isDomainError(error)) {
    const body: ErrorBody = { code: error.code, message: error.message };
    if (Object.keys(error.context).length > 0 && error.status < 500) body.details = error.context;
    return { status: error.status, body };
  }
  return { status: 500, body: { code: 'INTERNAL', message: 'Internal error' } };
}
