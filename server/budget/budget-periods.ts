/** The budget's periods are UTC days and UTC months: [start, end) for the instant `now`. */
export function budgetPeriods(now: Date) {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return {
    day: { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) },
    month: { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) },
  };
}

/** The instant truncated to its UTC hour. */
export function startOfHour(now: Date): Date {
  return new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
}

export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function formatUsd(value: number): string {
  return `$${value.toFixed(2)}`;
}
