import { escapeHtml } from '../sharing/html.ts';

/**
 * The branded replies of convert-by-email, one per outcome the specification
 * lists, each with a plain-text and an HTML body. Every value that came from
 * the sender (file names, the subject) is escaped here; the MIME composer
 * cleans headers separately.
 */

export type ReplyKind =
  | 'acknowledgment'
  | 'result'
  | 'unregistered'
  | 'no_attachment'
  | 'unsupported_type'
  | 'too_large'
  | 'insufficient_credits'
  | 'conversion_failed'
  | 'conversion_cancelled';

export type ReplyLinks = { publicAddress: string; signUpUrl: string; buyCreditsUrl: string };

export type ReplyFacts = {
  filename?: string;
  estimatedPages?: number;
  pages?: number;
  standardPages?: number;
  complexPages?: number;
  creditsCharged?: number;
  wcagStatus?: string;
  /** What the customer can still spend: credits (paid) or free pages left. */
  balance?: { planType: 'free' | 'paid'; available: number };
  maxMegabytes?: number;
  /** The detail of an unsupported file (not a PDF, password-protected, damaged). */
  reason?: string;
  /** A download link when the HTML is too large to attach. */
  downloadUrl?: string;
  attached?: boolean;
};

export type ReplyContent = { subject: string; text: string; html: string };

type Paragraphs = { title: string; lines: string[]; link?: { href: string; label: string } };

function describeBalance(balance: ReplyFacts['balance']): string {
  if (!balance) return '';
  return balance.planType === 'paid'
    ? `Your balance is ${balance.available} credit${balance.available === 1 ? '' : 's'}.`
    : `You have ${balance.available} of your 10 free pages left.`;
}

function content(kind: ReplyKind, facts: ReplyFacts, links: ReplyLinks): Paragraphs {
  const file = facts.filename ?? 'your file';
  switch (kind) {
    case 'acknowledgment':
      return {
        title: 'We are converting your PDF',
        lines: [
          `We received ${file}${facts.estimatedPages ? ` (about ${facts.estimatedPages} page${facts.estimatedPages === 1 ? '' : 's'})` : ''} and started converting it to accessible HTML.`,
          'You will get the result in a reply to this thread, usually within a few minutes.',
        ],
      };
    case 'result': {
      const charged = facts.creditsCharged ?? 0;
      return {
        title: 'Your accessible HTML is ready',
        lines: [
          facts.attached
            ? `The accessible HTML of ${file} is attached.`
            : `The accessible HTML of ${file} is too large to attach; download it with the link below (valid for 24 hours).`,
          `${facts.pages ?? 0} page${facts.pages === 1 ? '' : 's'} converted (${facts.standardPages ?? 0} standard, ${facts.complexPages ?? 0} complex); ${charged} credit${charged === 1 ? '' : 's'} used.`,
          facts.wcagStatus === 'passed'
            ? 'The automatic accessibility audit found no problems.'
            : 'The automatic accessibility audit found things to review (such as pictures that need a description); the report in the download lists them.',
          describeBalance(facts.balance),
        ],
        link: facts.downloadUrl ? { href: facts.downloadUrl, label: 'Download the HTML, tagged PDF and report' } : undefined,
      };
    }
    case 'unregistered':
      return {
        title: 'Register to convert PDFs by email',
        lines: [
          'We could not find a Folio account for the address you wrote from, so we did not convert anything.',
          `Sign up with this address (the first 10 pages are free), then send your PDF to ${links.publicAddress} again.`,
        ],
        link: { href: links.signUpUrl, label: 'Sign up for Folio' },
      };
    case 'no_attachment':
      return {
        title: 'Please attach a PDF',
        lines: [`Your message had no attachment. Reply with the PDF attached (up to ${facts.maxMegabytes ?? 25} MB) and we will convert it.`],
      };
    case 'unsupported_type':
      return {
        title: 'Only PDF files can be converted',
        lines: [
          `${file} is not a PDF we can convert${facts.reason ? `: ${facts.reason}` : ''}.`,
          'Convert-by-email accepts PDF files only. Reply with a PDF attached.',
        ],
      };
    case 'too_large':
      return {
        title: 'Your file is too large',
        lines: [
          `${file} is larger than the ${facts.maxMegabytes ?? 25} MB limit${facts.reason ? ` (${facts.reason})` : ''}.`,
          'Split it into smaller PDFs, or upload it in the web app.',
        ],
      };
    case 'insufficient_credits':
      return {
        title: 'Not enough credits',
        lines: [
          `Converting ${file} needs about ${facts.estimatedPages ?? facts.pages ?? 1} credit${(facts.estimatedPages ?? facts.pages ?? 1) === 1 ? '' : 's'} (one per page). ${describeBalance(facts.balance)}`,
          'Nothing was converted and nothing was charged. Buy credits, then send the PDF again.',
        ],
        link: { href: links.buyCreditsUrl, label: 'Buy credits' },
      };
    case 'conversion_failed':
      return {
        title: 'We could not convert your PDF',
        lines: [
          `The conversion of ${file} failed${facts.reason ? `: ${facts.reason}` : ''}.`,
          'No credits were charged. We have logged the error; you can try again, or reply to tell us about it.',
        ],
      };
    case 'conversion_cancelled':
      return {
        title: 'Your conversion was cancelled',
        lines: [`The conversion of ${file} was cancelled before it finished. No credits were charged.`],
      };
  }
}

/** The reply's subject: `Re: ` and the sender's subject (threads stay together), or ours when theirs was empty. */
function replySubject(original: string, kind: ReplyKind): string {
  const trimmed = original.replace(/\s+/g, ' ').trim().slice(0, 200);
  if (!trimmed) return kind === 'result' ? 'Your accessible HTML' : 'Your PDF conversion';
  return /^re:/i.test(trimmed) ? trimmed : `Re: ${trimmed}`;
}

export function renderReply(kind: ReplyKind, facts: ReplyFacts, links: ReplyLinks, originalSubject: string): ReplyContent {
  const body = content(kind, facts, links);
  const lines = body.lines.filter(Boolean);
  const footer = `Folio converts PDFs to accessible HTML. Reply to this email with another PDF to convert it (${links.publicAddress}).`;
  const text = [body.title, '', ...lines, ...(body.link ? ['', `${body.link.label}: ${body.link.href}`] : []), '', '--', footer, ''].join('\n');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(body.title)}</title></head>
<body style="margin:0;padding:24px;background:#f5f5f4;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#1c1917">
<main style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">
<p style="margin:0 0 16px;font-weight:700;color:#1d4ed8">Folio</p>
<h1 style="margin:0 0 16px;font-size:20px">${escapeHtml(body.title)}</h1>
${lines.map((line) => `<p style="margin:0 0 12px;line-height:1.5">${escapeHtml(line)}</p>`).join('\n')}
${body.link ? `<p style="margin:16px 0"><a href="${escapeHtml(body.link.href)}" style="color:#1d4ed8">${escapeHtml(body.link.label)}</a></p>` : ''}
</main>
<footer style="max-width:560px;margin:16px auto 0;font-size:13px;color:#57534e"><p>${escapeHtml(footer)}</p></footer>
</body></html>
`;
  return { subject: replySubject(originalSubject, kind), text, html };
}
