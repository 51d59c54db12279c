import { createHash } from 'node:crypto';
import type { Config } from '../config.ts';
import { createOutOfBandSender, outOfBandSettings, type OutOfBandSender } from './out-of-band-sender.ts';

export type FatalAlertOptions = {
  /** Mails per rolling hour, per process; past it fatal lines are counted and reported with the next mail. */
  maxPerHour: number;
  /** The same message (text and error) is mailed once within this window. */
  dedupeMs: number;
  now?: () => number;
  /** Told when a send fails; must not log at fatal (that would loop). */
  onFailure?: (error: string) => void;
};

export type FatalLine = { message: string; error?: string };

/** How many distinct messages the dedupe window remembers: a storm of unique lines cannot grow memory. */
const REMEMBERED_MESSAGES = 1000;

/**
 * The logger's fatal transport: each fatal line becomes an out-of-band mail
 * (no database, so it still leaves when the database is the thing that
 * died), deduplicated by message within `dedupeMs` and rate-limited to
 * `maxPerHour`. Returns at once; the send runs in the background and never
 * throws into the logging call.
 */
export function createFatalAlertTransport(sender: OutOfBandSender, options: FatalAlertOptions): (line: FatalLine) => Promise<void> {
  const now = options.now ?? Date.now;
  const lastSent = new Map<string, number>();
  const sentAt: number[] = [];
  let dropped = 0;
  return async (line) => {
    const at = now();
    const text = line.error ? `${line.message}\n\n${line.error}` : line.message;
    const digest = createHash('sha256').update(text).digest('hex').slice(0, 32);
    const previous = lastSent.get(digest);
    if (previous !== undefined && at - previous < options.dedupeMs) return;
    while (sentAt.length > 0 && at - sentAt[0]! >= 60 * 60 * 1000) sentAt.shift();
    if (sentAt.length >= options.maxPerHour) {
      dropped++;
      return;
    }
    sentAt.push(at);
    lastSent.delete(digest);
    lastSent.set(digest, at);
    if (lastSent.size > REMEMBERED_MESSAGES) lastSent.delete(lastSent.keys().next().value!);
    const note = dropped > 0 ? `\n\n(${dropped} earlier fatal lines were not mailed: more than ${options.maxPerHour} an hour)` : '';
    dropped = 0;
    const outcome = await sender.send({
      source: 'fatal_log',
      subject: `Folio fatal: ${line.message.slice(0, 120)}`,
      text: `${text}${note}`,
      // Other processes logging the same line in the same window send the same key: provider A delivers it once.
      key: `fatal-log:${digest}:${Math.floor(at / options.dedupeMs)}`,
    });
    if (!outcome.ok) options.onFailure?.(outcome.error);
  };
}

/** The transport the entry files give their logger, from the environment (ALERT_EMAIL, PROVIDER_A_*, FATAL_ALERT_*). */
export function fatalAlertsFor(config: Pick<Config, 'email' | 'alerts' | 'budget'>): (line: FatalLine) => Promise<void> {
  return createFatalAlertTransport(createOutOfBandSender(outOfBandSettings(config)), {
    maxPerHour: config.budget.fatalAlertsPerHour,
    dedupeMs: config.budget.fatalDedupeMs,
    // stderr, not the logger: a failure to mail a fatal line must not become another fatal line
    onFailure: (error) => process.stderr.write(`fatal-log alert not sent: ${error}\n`),
  });
}
