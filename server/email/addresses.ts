/**
 * Mailbox strings as callers write them: `a@b.example` or
 * `Display Name <a@b.example>`. We send them as given and use the bare,
 * lowercase address for suppression lookups and the send log.
 */
const BARE = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/;
const NAMED = /^(.*?)\s*<([^<>]+)>\s*$/;

export type Mailbox = { original: string; address: string; localPart: string; domain: string };

/** Parses one mailbox; undefined when it is not an address we can send to. */
export function parseMailbox(value: string): Mailbox | undefined {
  const trimmed = value.trim();
  const named = NAMED.exec(trimmed);
  const bare = (named ? named[2]! : trimmed).trim();
  if (!BARE.test(bare)) return undefined;
  const at = bare.lastIndexOf('@');
  return { original: trimmed, address: bare.toLowerCase(), localPart: bare.slice(0, at), domain: bare.slice(at + 1).toLowerCase() };
}

export function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * A From on the retired sender domain (or any subdomain of it) becomes the same
 * local part on the current sender domain; the display name and everything
 * else of the string stay as written. Other addresses pass through unchanged.
 */
export function rewriteFrom(from: string, retiredDomain: string | undefined, senderDomain: string | undefined): string {
  if (!retiredDomain || !senderDomain) return from;
  const mailbox = parseMailbox(from);
  if (!mailbox) return from;
  const retired = retiredDomain.toLowerCase();
  if (mailbox.domain !== retired && !mailbox.domain.endsWith(`.${retired}`)) return from;
  const at = from.lastIndexOf('@');
  const end = from.indexOf('>', at);
  return `${from.slice(0, at + 1)}${senderDomain}${end === -1 ? '' : from.slice(end)}`;
}
