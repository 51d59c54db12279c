import type { Mailbox } from './addresses.ts';
import type { EmailCategory, SuppressionReason } from './types.ts';

/**
 * Which suppression reasons block which category (specification: "Suppression
 * effect by category"). Sign-in mail still reaches people who once complained,
 * and admin alerts reach even a bouncing inbox; a manual suppression blocks all.
 */
const BLOCKING: Record<EmailCategory, ReadonlySet<SuppressionReason>> = {
  auth: new Set(['hard_bounce', 'manual']),
  alert: new Set(['manual']),
  transactional: new Set(['hard_bounce', 'complaint', 'manual']),
  notification: new Set(['hard_bounce', 'complaint', 'manual']),
  marketing: new Set(['hard_bounce', 'complaint', 'manual']),
};

const REASON_WORDS: Record<SuppressionReason, string> = { hard_bounce: 'hard bounce', complaint: 'complaint', manual: 'manual' };

export type Recipients = { to: Mailbox[]; cc: Mailbox[]; bcc: Mailbox[] };
export type Blocked = { address: string; reason: SuppressionReason };

/**
 * Drops every recipient whose suppression blocks this category. When no To
 * recipient is left, `allToBlockedBy` names the reason of the first To
 * (the message is then not sent at all).
 */
export function applySuppressions(recipients: Recipients, suppressions: ReadonlyMap<string, SuppressionReason>, category: EmailCategory) {
  const blocking = BLOCKING[category];
  const blocked: Blocked[] = [];
  const keep = (list: Mailbox[]) =>
    list.filter((mailbox) => {
      const reason = suppressions.get(mailbox.address);
      if (reason && blocking.has(reason)) {
        blocked.push({ address: mailbox.address, reason });
        return false;
      }
      return true;
    });
  const kept: Recipients = { to: keep(recipients.to), cc: keep(recipients.cc), bcc: keep(recipients.bcc) };
  const firstTo = recipients.to[0];
  const allToBlockedBy = kept.to.length === 0 && firstTo ? suppressions.get(firstTo.address) : undefined;
  return { kept, blocked, allToBlockedBy };
}

export function suppressedError(reason: SuppressionReason): string {
  return `Recipient suppressed: ${REASON_WORDS[reason]}`;
}
