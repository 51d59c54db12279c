import { SESv2Client, SendEmailCommand, type SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import type { FailureKind } from '../types.ts';
import type { EmailProvider } from './provider.ts';

/**
 * Error names that say SES did not take the message and will not for a while:
 * throttling and quotas, sending paused or the account suspended, an unverified
 * sender identity, and our own credentials missing, refused or expired.
 */
const UNAVAILABLE_NAMES = new Set([
  'TooManyRequestsException',
  'LimitExceededException',
  'ThrottlingException',
  'Throttling',
  'SendingPausedException',
  'AccountSuspendedException',
  'MailFromDomainNotVerifiedException',
  'CredentialsProviderError',
  'ExpiredTokenException',
  'ExpiredToken',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'AccessDeniedException',
  'MissingAuthenticationToken',
]);

type SesError = { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };

/**
 * SES refuses mail from an identity it has not verified with a plain
 * MessageRejected (400) whose message is all that tells it apart from a
 * rejected message: "Email address is not verified. The following identities
 * failed the check in region …". The specification counts an unverified
 * sender as `unavailable`: the other provider may well send it.
 */
function unverifiedIdentity(error: SesError) {
  return error.name === 'MessageRejected' && /\bnot verified\b/i.test(error.message ?? '');
}

/**
 * SES failure → kind (specification: "Provider-B classification").
 * - the names above, MessageRejected for an unverified identity, any 403, 429
 *   and 503 → unavailable;
 * - no HTTP status at all (timeout, reset, refused, abort: the request may
 *   have been written) and any other 5xx → ambiguous;
 * - other 4xx (MessageRejected, BadRequestException, NotFoundException for an
 *   unknown configuration set) → rejected.
 */
function classifySesError(error: unknown): FailureKind {
  const { name, $metadata } = (error ?? {}) as SesError;
  if ((name && UNAVAILABLE_NAMES.has(name)) || unverifiedIdentity((error ?? {}) as SesError)) return 'unavailable';
  const status = $metadata?.httpStatusCode;
  if (status === undefined) return 'ambiguous';
  if (status === 403 || status === 503 || status === 429) return 'unavailable';
  if (status >= 500) return 'ambiguous';
  if (status >= 400) return 'rejected';
  return 'ambiguous';
}

export type SesSettings = {
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  timeoutMs: number;
};

/**
 * Provider B through @aws-sdk/client-sesv2. SES has no idempotency key, so the
 * SDK's own retries (3 attempts by default, including after timeouts and 5xx)
 * could duplicate mail: `maxAttempts: 1`, and the outbox owns every retry.
 * `requestTimeout` only logs unless `throwOnRequestTimeout` is set.
 * Credentials: CLOUD_* when both key parts are set, else the SDK's default
 * chain (environment, profile, instance role); none at all is `unavailable`.
 */
export function createSesProvider(settings: SesSettings): EmailProvider {
  const client = new SESv2Client({
    region: settings.region,
    endpoint: settings.endpoint,
    maxAttempts: 1,
    credentials:
      settings.accessKeyId && settings.secretAccessKey
        ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, sessionToken: settings.sessionToken }
        : undefined,
    requestHandler: { requestTimeout: settings.timeoutMs, connectionTimeout: settings.timeoutMs, throwOnRequestTimeout: true },
  });
  return {
    name: 'provider_b',
    async send(message) {
      const input: SendEmailCommandInput = {
        FromEmailAddress: message.from,
        Destination: {
          ToAddresses: message.to,
          ...(message.cc.length > 0 ? { CcAddresses: message.cc } : {}),
          ...(message.bcc.length > 0 ? { BccAddresses: message.bcc } : {}),
        },
        ...(message.replyTo.length > 0 ? { ReplyToAddresses: message.replyTo } : {}),
        Content: {
          Simple: {
            Subject: { Data: message.subject, Charset: 'UTF-8' },
            Body: {
              ...(message.html !== undefined ? { Html: { Data: message.html, Charset: 'UTF-8' } } : {}),
              ...(message.text !== undefined ? { Text: { Data: message.text, Charset: 'UTF-8' } } : {}),
            },
            Headers: Object.entries(message.headers).map(([Name, Value]) => ({ Name, Value })),
            ...(message.attachments.length > 0
              ? {
                  Attachments: message.attachments.map((file) => ({
                    RawContent: Buffer.from(file.content, 'base64'),
                    FileName: file.filename,
                    ContentType: file.contentType,
                    ContentDisposition: 'ATTACHMENT' as const,
                  })),
                }
              : {}),
          },
        },
        EmailTags: message.tags.map((tag) => ({ Name: tag.name, Value: tag.value })),
        ...(message.configurationSet ? { ConfigurationSetName: message.configurationSet } : {}),
      };
      try {
        const output = await client.send(new SendEmailCommand(input));
        if (output.MessageId) return { ok: true, messageId: output.MessageId };
        return { ok: false, kind: 'ambiguous', error: 'provider_b: answer without a MessageId' };
      } catch (error) {
        const { name, $metadata } = error as SesError;
        const status = $metadata?.httpStatusCode;
        return { ok: false, kind: classifySesError(error), error: `provider_b ${name ?? 'Error'} (${status ?? 'no response'}): ${(error as Error).message}` };
      }
    },
  };
}
