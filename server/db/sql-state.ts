/**
 * The SQLSTATE of a database error, looked for through the `cause` chain
 * (slonik wraps the driver's error). Our functions raise their own states
 * (`FC…` credits, `FD…` conversions) so callers branch on codes, not messages.
 */
export function sqlState(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
