import { z } from 'zod';
import { downloadUrl } from '../conversion-jobs/download-token.ts';

/**
 * The JSON body a customer endpoint receives (specification: "Webhook
 * delivery payload"). Built once at dispatch and stored as text, so every
 * attempt sends the same bytes; receivers key their idempotency on fileId.
 */
export type WebhookPayload =
  | {
      event: 'conversion.completed';
      fileId: string;
      userId: string;
      tenantId: string | null;
      /** when the conversion finished (ISO 8601, UTC) */
      timestamp: string;
      data: {
        originalName: string;
        backend: string;
        wcagStatus: 'passed' | 'failed' | null;
        pages: number | null;
        /** pre-signed, no auth needed: the HTML, the tagged PDF and the conversion report */
        zipUrl: string;
        /** 24 hours after dispatch */
        zipExpiresAt: string;
      };
    }
  | {
      event: 'conversion.failed';
      fileId: string;
      userId: string;
      tenantId: string | null;
      timestamp: string;
      data: { originalName: string; backend: string; pages: number | null; error: { code: string; message: string } };
    }
  | {
      event: 'ping';
      fileId: null;
      userId: string;
      tenantId: string | null;
      timestamp: string;
      data: { endpointId: string; message: string };
    };

/** What the conversion paths write to outbox_events.payload; read as untrusted, every field optional. */
const OutboxPayload = z.object({
  userId: z.uuid().optional(),
  tenantId: z.uuid().nullable().optional(),
  originalName: z.string().max(1000).optional(),
  backend: z.string().max(100).optional(),
  wcagStatus: z.enum(['passed', 'failed']).optional(),
  pages: z.number().int().nonnegative().optional(),
  code: z.string().max(200).optional(),
  message: z.string().max(2000).optional(),
  inline: z.boolean().optional(),
});

/** The file's facts at dispatch time, for what the outbox row does not carry. */
export type FileFacts = { userId: string; tenantId: string | null; originalName: string; pages: number | null };

export type ConversionEvent = {
  eventId: number;
  type: 'conversion.completed' | 'conversion.failed';
  fileId: string;
  userId: string;
  tenantId: string | null;
  body: string;
};

/** A download link valid for 24 hours from `now`, and when it stops working. */
function presignedZip(options: { publicBaseUrl: string; downloadSecret: string; fileId: string; now: Date }) {
  const link = downloadUrl(options.downloadSecret, options.fileId, options.now);
  // the token starts with its expiry in Unix seconds
  const expiresAtSeconds = Number(/[?&]token=(\d+)/.exec(link)![1]);
  return { zipUrl: `${options.publicBaseUrl}${link}`, zipExpiresAt: new Date(expiresAtSeconds * 1000).toISOString() };
}

/**
 * The body of a conversion event, or undefined when it names no file we can
 * attribute to a user (the file and its owner were deleted before dispatch).
 */
export function buildConversionEvent(
  row: { id: number; type: string; aggregateId: string | null; payload: unknown; createdAt: Date },
  facts: FileFacts | undefined,
  link: { publicBaseUrl: string; downloadSecret: string; now: Date },
): ConversionEvent | undefined {
  if ((row.type !== 'conversion.completed' && row.type !== 'conversion.failed') || !row.aggregateId) return undefined;
  const parsed = OutboxPayload.safeParse(row.payload);
  const given = parsed.success ? parsed.data : {};
  const userId = given.userId ?? facts?.userId;
  if (!userId) return undefined;
  const fileId = row.aggregateId;
  const tenantId = given.tenantId !== undefined ? given.tenantId : (facts?.tenantId ?? null);
  const common = { fileId, userId, tenantId, timestamp: row.createdAt.toISOString() };
  const originalName = given.originalName ?? facts?.originalName ?? '';
  const backend = given.backend ?? (given.inline ? 'docx' : 'local');
  const pages = given.pages ?? facts?.pages ?? null;
  const payload: WebhookPayload =
    row.type === 'conversion.completed'
      ? {
          event: row.type,
          ...common,
          data: {
            originalName,
            backend,
            wcagStatus: given.wcagStatus ?? null,
            pages,
            ...presignedZip({ ...link, fileId }),
          },
        }
      : {
          event: row.type,
          ...common,
          data: {
            originalName,
            backend,
            pages,
            error: { code: given.code ?? 'CONVERSION_FAILED', message: given.message ?? 'The conversion failed' },
          },
        };
  return { eventId: row.id, type: row.type, fileId, userId, tenantId, body: JSON.stringify(payload) };
}
