import { randomBytes } from 'node:crypto';

/**
 * RFC 5322 / MIME text of one outgoing reply. Every header value we write
 * passes through `headerText` (control characters, CR and LF removed), and
 * message ids through `messageIds` (only well-formed `<...>` tokens survive),
 * so nothing a sender put in a subject or a References header can add a
 * header or a recipient to our reply.
 */

export type OutgoingAttachment = { filename: string; contentType: string; content: Buffer };

export type OutgoingMessage = {
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  /** Our own Message-ID, brackets included. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  date: Date;
  text: string;
  html: string;
  attachments?: OutgoingAttachment[];
  /** Extra headers (names fixed by us, values cleaned). */
  headers?: Record<string, string>;
};

/** At most this many ids in References: the thread's root and its most recent ones (RFC 5322 3.6.4 allows trimming). */
const MAX_REFERENCES = 20;
const MESSAGE_ID = /<[^<>\s"\\]{1,250}@[^<>\s"\\]{1,250}>/g;

/** A header value on one line, without control characters. */
function headerText(value: string): string {
  return value
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Well-formed message ids found in a header value, in order, without repeats. */
export function messageIds(value: string | undefined): string[] {
  if (!value) return [];
  return [...new Set(value.match(MESSAGE_ID) ?? [])];
}

/** References for a reply: the original's References, then its Message-ID; keeps the first and the newest when long. */
export function replyReferences(references: string | undefined, messageId: string | undefined): string[] {
  const ids = [...new Set([...messageIds(references), ...messageIds(messageId)])];
  return ids.length <= MAX_REFERENCES ? ids : [ids[0]!, ...ids.slice(ids.length - (MAX_REFERENCES - 1))];
}

const needsEncoding = (text: string) => /[^\x20-\x7e]/.test(text);

/** RFC 2047 encoded words (UTF-8, base64), each at most 75 characters, split on character boundaries. */
function encodeWords(text: string): string {
  const words: string[] = [];
  let current = '';
  for (const char of text) {
    if (Buffer.byteLength(current + char) > 45) {
      words.push(current);
      current = '';
    }
    current += char;
  }
  if (current) words.push(current);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word).toString('base64')}?=`).join('\r\n ');
}

/** An unstructured header (Subject): ASCII folded at spaces, anything else as encoded words. */
function unstructured(value: string): string {
  const text = headerText(value);
  if (needsEncoding(text)) return encodeWords(text);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > 76) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join('\r\n ');
}

/** `Name <address>` with the display name quoted or encoded; a bare address stays bare. */
function mailbox(value: string): string {
  const text = headerText(value);
  const named = /^(.*?)\s*<([^<>\s]+@[^<>\s]+)>$/.exec(text);
  if (!named) return text;
  const name = named[1]!.replace(/^"|"$/g, '');
  if (!name) return `<${named[2]}>`;
  const shown = needsEncoding(name) ? encodeWords(name) : `"${name.replace(/["\\]/g, '\\$&')}"`;
  return `${shown} <${named[2]}>`;
}

function base64Lines(content: Buffer): string {
  return (content.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n');
}

/** A filename parameter: plain when it is safe ASCII, RFC 2231 percent-encoded UTF-8 otherwise. */
function filenameParameter(name: string, parameter: 'name' | 'filename'): string {
  const clean = headerText(name).replace(/[/\\]/g, '_') || 'attachment';
  if (/^[\x20-\x7e]+$/.test(clean) && !/["\\]/.test(clean)) return `${parameter}="${clean}"`;
  return `${parameter}*=UTF-8''${encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

function boundary(): string {
  return `folio-${randomBytes(12).toString('hex')}`;
}

/** The whole message as CRLF text, ready to be base64url-encoded for the send endpoint. */
export function composeMime(message: OutgoingMessage): string {
  const headers: string[] = [
    `From: ${mailbox(message.from)}`,
    `To: ${mailbox(message.to)}`,
    ...(message.replyTo ? [`Reply-To: ${mailbox(message.replyTo)}`] : []),
    `Subject: ${unstructured(message.subject)}`,
    `Date: ${message.date.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: ${messageIds(message.messageId)[0] ?? message.messageId}`,
  ];
  const inReplyTo = messageIds(message.inReplyTo)[0];
  if (inReplyTo) headers.push(`In-Reply-To: ${inReplyTo}`);
  const references = (message.references ?? []).flatMap((value) => messageIds(value));
  if (references.length > 0) headers.push(`References: ${references.join('\r\n ')}`);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) headers.push(`${name}: ${headerText(value)}`);
  }
  headers.push('MIME-Version: 1.0');

  const alternative = boundary();
  const body = [
    `--${alternative}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(Buffer.from(message.text)),
    `--${alternative}`,
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(Buffer.from(message.html)),
    `--${alternative}--`,
  ];
  const attachments = message.attachments ?? [];
  if (attachments.length === 0) {
    return [...headers, `Content-Type: multipart/alternative; boundary="${alternative}"`, '', ...body, ''].join('\r\n');
  }
  const mixed = boundary();
  const parts = [`--${mixed}`, `Content-Type: multipart/alternative; boundary="${alternative}"`, '', ...body];
  for (const file of attachments) {
    parts.push(
      `--${mixed}`,
      `Content-Type: ${headerText(file.contentType)}; ${filenameParameter(file.filename, 'name')}`,
      `Content-Disposition: attachment; ${filenameParameter(file.filename, 'filename')}`,
      'Content-Transfer-Encoding: base64',
      '',
      base64Lines(file.content),
    );
  }
  parts.push(`--${mixed}--`);
  return [...headers, `Content-Type: multipart/mixed; boundary="${mixed}"`, '', ...parts, ''].join('\r\n');
}
