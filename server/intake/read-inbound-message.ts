import PostalMime, { type Address, type Attachment, type Email } from 'postal-mime';

/**
 * What the intake flow needs from a raw message, read with postal-mime under
 * limits that keep a hostile message cheap: a bounded part depth and header
 * size, forwarded messages parsed only a few levels down. Attachments are
 * never decompressed or opened here: a zip bomb stays a few inert bytes.
 */

/** Far deeper than any mail client nests; deeper is an attack and rejects the parse. */
const MAX_PART_DEPTH = 32;
const MAX_HEADER_BYTES = 256 * 1024;
/** A PDF forwarded inside a forwarded message is still found; deeper messages stay opaque attachments. */
const MAX_FORWARD_DEPTH = 3;
/** PDF readers accept the header anywhere in the first 1024 bytes (ISO 32000 allows leading garbage). */
const PDF_HEADER_WINDOW = 1024;

export type InboundAttachment = { filename: string; mimeType: string; content: Buffer };

export type InboundMessage = {
  /** The From mailbox, bare and lowercase; undefined when the header has none. */
  sender?: string;
  senderName?: string;
  subject: string;
  messageId?: string;
  references?: string;
  /** Lowercased header name → values (repeats kept), for the loop guards. */
  headers: Map<string, string[]>;
  contentType: string;
  attachments: InboundAttachment[];
};

export class UnreadableMessageError extends Error {
  override name = 'UnreadableMessageError';
}

function firstMailbox(address: Address | undefined): { address: string; name: string } | undefined {
  if (!address) return undefined;
  const mailbox = address.group ? address.group[0] : address;
  if (!mailbox?.address?.includes('@')) return undefined;
  return { address: mailbox.address.trim().toLowerCase(), name: mailbox.name };
}

function toBuffer(content: Attachment['content']): Buffer {
  if (typeof content === 'string') return Buffer.from(content, 'base64');
  return Buffer.from(content instanceof ArrayBuffer ? new Uint8Array(content) : content);
}

/** Parses the raw message; throws UnreadableMessageError when postal-mime refuses it (too deep, headers too large, broken). */
export async function readInboundMessage(raw: Buffer): Promise<InboundMessage> {
  let email: Email;
  try {
    email = await PostalMime.parse(raw, {
      maxNestingDepth: MAX_PART_DEPTH,
      maxHeadersSize: MAX_HEADER_BYTES,
      maxRfc822NestingDepth: MAX_FORWARD_DEPTH,
      attachmentEncoding: 'arraybuffer',
    });
  } catch (error) {
    throw new UnreadableMessageError(`the message could not be parsed: ${(error as Error).message}`, { cause: error });
  }
  const headers = new Map<string, string[]>();
  for (const header of email.headers) {
    const values = headers.get(header.key) ?? [];
    values.push(header.value);
    headers.set(header.key, values);
  }
  const from = firstMailbox(email.from);
  return {
    sender: from?.address,
    senderName: from?.name || undefined,
    subject: email.subject ?? '',
    messageId: email.messageId,
    references: email.references,
    headers,
    contentType: (headers.get('content-type')?.[0] ?? 'text/plain').toLowerCase(),
    // Inline pictures an HTML body refers to (signatures, logos) are not something the sender attached.
    attachments: email.attachments
      .filter((attachment) => !attachment.related)
      .map((attachment) => ({
        filename: attachment.filename ?? '',
        mimeType: attachment.mimeType,
        content: toBuffer(attachment.content),
      })),
  };
}

/** A PDF by its bytes: `%PDF-` within the first 1024 bytes, whatever the name or the declared type say. */
function isPdf(content: Buffer): boolean {
  return content.subarray(0, PDF_HEADER_WINDOW).includes('%PDF-');
}

export type AttachmentChoice = { kind: 'pdf'; attachment: InboundAttachment } | { kind: 'unsupported'; attachment: InboundAttachment } | { kind: 'none' };

/**
 * The first attachment that is a PDF by content. Without one: `unsupported`
 * names the first attachment (one that only claims to be a PDF comes first,
 * so the reply can say its content is not one), `none` when nothing was attached.
 */
export function choosePdfAttachment(attachments: InboundAttachment[]): AttachmentChoice {
  const pdf = attachments.find((attachment) => isPdf(attachment.content));
  if (pdf) return { kind: 'pdf', attachment: pdf };
  const claimsPdf = attachments.find((attachment) => attachment.mimeType === 'application/pdf' || /\.pdf$/i.test(attachment.filename));
  const first = claimsPdf ?? attachments[0];
  return first ? { kind: 'unsupported', attachment: first } : { kind: 'none' };
}

/** A name safe to keep and to show: no path, no control characters, at most 200 characters, `.pdf` at the end. */
export function safePdfName(filename: string): string {
  const base =
    filename
      .split(/[/\\]/)
      .pop()!
      .replace(/[\u0000-\u001f\u007f"<>|]+/g, '')
      .trim() || 'document.pdf';
  const withExtension = /\.pdf$/i.test(base) ? base : `${base}.pdf`;
  return withExtension.length <= 200 ? withExtension : `${withExtension.slice(0, 196)}.pdf`;
}

/** Addresses that must never get a reply: automatic senders by convention (RFC 3834 5.2, RFC 3464). */
const SYSTEM_LOCAL_PARTS = /^(mailer-daemon|postmaster|no-?reply|do-?not-?reply|bounces?|auto-?reply)$/i;

/**
 * Why a message must get no reply at all, or undefined when it may. Mail
 * loops are the risk: an auto-responder answering our reply, a bounce of one
 * of our replies, or our own reply fed back to us.
 */
export function loopGuardReason(
  message: InboundMessage,
  envelopeFrom: string | null | undefined,
  ownAddresses: string[],
  ownDomains: string[],
): string | undefined {
  const header = (name: string) => message.headers.get(name)?.[0]?.trim().toLowerCase();
  const autoSubmitted = header('auto-submitted');
  if (autoSubmitted && autoSubmitted !== 'no') return `auto-submitted: ${autoSubmitted}`;
  if (envelopeFrom === '' || envelopeFrom === '<>') return 'bounce: empty envelope sender';
  if (/^multipart\/report/.test(message.contentType)) return 'bounce: delivery report';
  const precedence = header('precedence');
  if (precedence && /^(bulk|junk|list|auto_reply)$/.test(precedence)) return `precedence: ${precedence}`;
  if (message.headers.has('x-autoreply') || message.headers.has('x-autorespond') || header('x-auto-response-suppress') === 'all') {
    return 'auto-reply header';
  }
  if (message.headers.has('list-id') || message.headers.has('list-unsubscribe')) return 'mailing list';
  if (!message.sender) return 'no sender address';
  const [local = '', domain = ''] = message.sender.split('@');
  if (SYSTEM_LOCAL_PARTS.test(local)) return `system sender: ${local}`;
  if (ownAddresses.includes(message.sender)) return 'our own address';
  if (ownDomains.some((own) => domain === own || domain.endsWith(`.${own}`))) return 'our own domain';
  return undefined;
}
