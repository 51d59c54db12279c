import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { answerLater, answerScript, listen, type RecordedRequest, readRequest, type ScriptedFake } from './fake-server.ts';

/**
 * A local Amazon SES v2 API for `SendEmail` (`POST /v2/email/outbound-emails`,
 * restJson1). Success is `200 {"MessageId": "..."}`; errors carry the
 * `x-amzn-errortype` header and a `{"message": ...}` body, which is exactly
 * where `@aws-sdk/client-sesv2` looks for the error name. SES has no
 * idempotency: every accepted request is a delivery.
 */
export type SesAnswer =
  /** A modelled (or credential) error; the status defaults to the one SES uses for that type. */
  | { kind: 'error'; type: string; status?: number; message?: string }
  /** A bare 5xx, optionally with a non-JSON body. */
  | { kind: 'status'; status: number; nonJson?: boolean }
  /** Accepts the message, answers after `ms`. */
  | { kind: 'delay'; ms: number }
  /** Destroys the connection without answering; `accepted: true` delivers first. */
  | { kind: 'drop'; accepted?: boolean };

type SesDelivered = { messageId: string; body: SesSendEmailBody };
export type SesSendEmailBody = {
  FromEmailAddress?: string;
  Destination?: { ToAddresses?: string[]; CcAddresses?: string[]; BccAddresses?: string[] };
  ReplyToAddresses?: string[];
  Content?: {
    Simple?: {
      Subject?: { Data?: string };
      Body?: { Html?: { Data?: string }; Text?: { Data?: string } };
      Headers?: Array<{ Name: string; Value: string }>;
      Attachments?: Array<{ RawContent: string; FileName: string; ContentType?: string }>;
    };
  };
  EmailTags?: Array<{ Name: string; Value: string }>;
  ConfigurationSetName?: string;
};

/** HTTP status SES answers each SendEmail error type with (client-sesv2 schemas; credential errors from the signing front end). */
const SES_ERROR_STATUS: Record<string, number> = {
  MessageRejected: 400,
  MailFromDomainNotVerifiedException: 400,
  AccountSuspendedException: 400,
  SendingPausedException: 400,
  LimitExceededException: 400,
  BadRequestException: 400,
  TooManyRequestsException: 429,
  NotFoundException: 404,
  UnrecognizedClientException: 403,
  InvalidSignatureException: 403,
  ExpiredTokenException: 403,
  AccessDeniedException: 403,
};

export type SesFake = ScriptedFake<SesAnswer> & { delivered: SesDelivered[] };

export async function startSesFake(): Promise<SesFake> {
  const requests: RecordedRequest[] = [];
  const delivered: SesDelivered[] = [];
  const script = answerScript<SesAnswer>();

  const reply = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string>) => {
    res.writeHead(status, { 'x-amzn-requestid': randomBytes(16).toString('hex'), ...headers });
    res.end(body);
  };
  const sendError = (res: http.ServerResponse, type: string, status: number, message: string) =>
    reply(res, status, JSON.stringify({ message }), {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/`,
    });

  const server = http.createServer(async (req, res) => {
    const request = await readRequest(req);
    requests.push(request);
    handle(req, res, request.json as SesSendEmailBody | undefined);
  });

  function handle(req: http.IncomingMessage, res: http.ServerResponse, body: SesSendEmailBody | undefined) {
    if (req.method !== 'POST' || req.url !== '/v2/email/outbound-emails') return sendError(res, 'NotFoundException', 404, 'Unknown operation');
    if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 '))
      return sendError(res, 'UnrecognizedClientException', 403, 'The security token included in the request is invalid.');

    const answer = script.take();
    if (answer?.kind === 'error') {
      return sendError(res, answer.type, answer.status ?? SES_ERROR_STATUS[answer.type] ?? 400, answer.message ?? `${answer.type} (fake)`);
    }
    if (answer?.kind === 'status') {
      if (answer.nonJson) return reply(res, answer.status, '<html><body>Service Unavailable</body></html>', { 'content-type': 'text/html' });
      const type = answer.status === 503 ? 'ServiceUnavailable' : 'InternalFailure';
      return sendError(res, type, answer.status, 'The request processing has failed because of an unknown error.');
    }
    if (answer?.kind === 'drop' && !answer.accepted) {
      req.socket.destroy();
      return;
    }
    if (!body?.FromEmailAddress || !body.Destination || !body.Content) return sendError(res, 'BadRequestException', 400, 'Missing required field');
    const messageId = `0100018c${randomBytes(20).toString('hex')}-000000`;
    delivered.push({ messageId, body });
    if (answer?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    const ok = () => reply(res, 200, JSON.stringify({ MessageId: messageId }), { 'content-type': 'application/json' });
    if (answer?.kind === 'delay') return answerLater(res, answer.ms, ok);
    ok();
  }

  const { url, close } = await listen(server);
  return {
    url,
    requests,
    delivered,
    next: script.next,
    always: script.always,
    reset: () => {
      requests.length = 0;
      delivered.length = 0;
      script.clear();
    },
    close,
  };
}
