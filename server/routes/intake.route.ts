import express from 'express';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { requireProxySecret } from '../http/guards.ts';
import { receiveMessage } from '../intake/receive-message.ts';
import { sendTestMail } from '../intake/send-test-mail.ts';
import type { RawRouteMount } from './index.ts';

function headerList(value: string | string[] | undefined): string[] {
  return (Array.isArray(value) ? value.join(',') : (value ?? ''))
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean)
    .slice(0, 50);
}

/**
 * The intake worker's HTTP doors. `POST /internal/inbound-email` takes one
 * raw message (`message/rfc822`, streamed to the store, never whole in
 * memory) from an email-routing service, with the envelope in
 * `x-envelope-from` / `x-envelope-to` when the service passes it on; 202
 * once stored and queued, exactly as the SMTP listener's 250. `POST
 * /test-send` sends `{to, subject, body}` through the mail-provider API.
 */
export const mountIntakeRoutes: RawRouteMount = (app, deps) => {
  app.post('/internal/inbound-email', async (req, res) => {
    try {
      requireProxySecret(deps, req.headers);
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'message/rfc822') throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the raw message as message/rfc822');
      const limit = deps.config.intake.maxMessageBytes;
      if (Number(req.headers['content-length'] ?? 0) > limit)
        throw new DomainError('PAYLOAD_TOO_LARGE', `The message is larger than ${limit} bytes`, { context: { limit } });
      const envelopeFrom = req.headers['x-envelope-from'];
      const received = await receiveMessage(deps, {
        source: 'http',
        body: req,
        envelopeFrom: typeof envelopeFrom === 'string' ? envelopeFrom.trim().replace(/^<|>$/g, '') : null,
        envelopeTo: headerList(req.headers['x-envelope-to']),
        remoteAddress: req.ip,
      });
      res.status(202).json(received);
    } catch (error) {
      if (!req.complete) res.setHeader('connection', 'close');
      sendError(res, error);
    }
  });

  app.post('/test-send', express.json({ limit: '64kb' }), async (req, res) => {
    try {
      requireProxySecret(deps, req.headers);
      res.json(await sendTestMail(deps, req.body));
    } catch (error) {
      sendError(res, error);
    }
  });
};
