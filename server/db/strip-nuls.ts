/**
 * PostgreSQL text and jsonb cannot hold U+0000: a NUL anywhere in a value
 * fails the whole statement. Input from outside (JSON bodies, signed
 * provider events) loses its NULs before it gets near a query.
 */
export function stripNuls<T>(value: T): T {
  if (typeof value === 'string') return (value.includes('\u0000') ? value.replaceAll('\u0000', '') : value) as T;
  if (Array.isArray(value)) return value.map(stripNuls) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [stripNuls(key), stripNuls(inner)])) as T;
  }
  return value;
}

/** JSON.parse's reviver form of stripNuls (keys are left to the caller's schema). */
export function reviveWithoutNuls(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}

/** The earliest and latest event time stored: providers' own clocks are trusted only this far. */
const EARLIEST_EVENT = Date.UTC(2000, 0, 1);
const FUTURE_SLACK_MS = 24 * 60 * 60 * 1000;

/**
 * A time a provider reports, clamped to 2000-01-01 .. a day from now: PostgreSQL's timestamptz cannot
 * take year 99999 (the statement would fail and the provider retry forever), and no real event is
 * dated outside that range. An invalid date is dropped.
 */
export function clampEventTime(date: Date | undefined, now = new Date()): Date | undefined {
  if (!date || Number.isNaN(date.getTime())) return undefined;
  return new Date(Math.min(Math.max(date.getTime(), EARLIEST_EVENT), now.getTime() + FUTURE_SLACK_MS));
}
