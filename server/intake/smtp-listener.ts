import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import { isDomainError } from '../errors.ts';
import { receiveMessage, type ReceiveDeps } from './receive-message.ts';

/** One message to more of our addresses than this is not a customer writing to us. */
const MAX_RECIPIENTS = 20;
/** Concurrent SMTP connections; more wait in the kernel's backlog. */
const MAX_CLIENTS = 200;

export type SmtpListener = { port: number; close: () => Promise<void> };

/** An SMTP reply code on an error, as smtp-server sends it. */
function smtpError(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

/**
 * The SMTP listener of the intake domain (where the MX, or the email-routing
 * service, delivers). It takes mail only for `INTAKE_DOMAIN` (any other
 * recipient is refused at RCPT with 550 5.7.1: we are no relay), advertises
 * and enforces the message size limit (552 at MAIL FROM when the client
 * declares a larger SIZE, 552 at the end of DATA otherwise), and says "250"
 * only once the message is stored and queued (receiveMessage), so the sending
 * server keeps and retries anything we could not take (451).
 *
 * No AUTH (nobody logs in to an MX) and no STARTTLS by default: the listener
 * sits behind the routing service or a TLS-terminating MX on a private port.
 */
export async function startSmtpListener(deps: ReceiveDeps, options: { port?: number; host?: string } = {}): Promise<SmtpListener> {
  const { intake } = deps.config;
  const domain = intake.domain;
  const server = new SMTPServer({
    name: domain,
    banner: 'Folio convert-by-email',
    size: intake.maxMessageBytes,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    maxClients: MAX_CLIENTS,
    logger: false,
    onRcptTo(address, session, callback) {
      const recipient = address.address.trim().toLowerCase();
      if (!recipient.endsWith(`@${domain}`)) {
        deps.log.info(
          { event: 'intake_rcpt_refused', recipient, remoteAddress: session.remoteAddress },
          'intake: refused a recipient outside the intake domain',
        );
        return callback(smtpError(550, `5.7.1 <${recipient}>: relay access denied; this server only accepts mail for ${domain}`));
      }
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(smtpError(452, '4.5.3 Too many recipients'));
      callback();
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      // The data stream must be read to its end before smtp-server may answer; a failed store still drains it.
      const ended = once(stream, 'end').catch(() => {});
      const body = new PassThrough();
      stream.pipe(body);
      const mailFrom = session.envelope.mailFrom;
      receiveMessage(deps, {
        source: 'smtp',
        body,
        envelopeFrom: mailFrom ? mailFrom.address : '',
        envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
        remoteAddress: session.remoteAddress,
      }).then(
        async (received) => {
          await ended;
          callback(null, `2.0.0 OK: queued as ${received.id}`);
        },
        async (error: unknown) => {
          stream.unpipe(body);
          stream.resume();
          await ended;
          if (stream.sizeExceeded || (isDomainError(error) && error.code === 'PAYLOAD_TOO_LARGE')) {
            // smtp-server answers an oversized message with its own 552 whatever we say; this is for the record.
            deps.log.info({ event: 'intake_too_large', remoteAddress: session.remoteAddress }, 'intake: refused a message over the size limit');
            return callback(smtpError(552, `5.3.4 Message too big: the limit is ${intake.maxMessageBytes} bytes`));
          }
          if (isDomainError(error) && error.code === 'BAD_REQUEST') return callback(smtpError(554, `5.6.0 ${error.message}`));
          deps.log.error(
            { event: 'intake_store_failed', err: error, remoteAddress: session.remoteAddress },
            'intake: could not store a message; the sender will retry',
          );
          callback(smtpError(451, '4.3.0 Temporary local problem; please try again later'));
        },
      );
    },
  });
  server.on('error', (error) => deps.log.error({ err: error }, 'intake SMTP listener error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? intake.smtpPort, options.host ?? '0.0.0.0', () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
