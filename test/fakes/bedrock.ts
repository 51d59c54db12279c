import { randomBytes } from 'node:crypto';
import http2 from 'node:http2';
import { answerLater, answerScript, listen, readRequest } from './fake-server.ts';

/**
 * A local Amazon Bedrock runtime for `Converse` (`POST /model/{modelId}/converse`,
 * restJson1), so `@aws-sdk/client-bedrock-runtime` can be driven against it.
 * It speaks HTTP/2 (cleartext, prior knowledge), because the runtime client's
 * default handler is the SDK's HTTP/2 one.
 * Success is `200 {"output":{"message":{"role":"assistant","content":[{"text":...}]}},
 * "stopReason", "usage":{inputTokens, outputTokens, totalTokens}, "metrics":{latencyMs}}`;
 * errors carry the `x-amzn-errortype` header and a `{"message": ...}` body,
 * which is where the SDK reads the error name from. Requests must be SigV4
 * signed (only the header's presence is checked) and document bytes arrive
 * base64-encoded, as the SDK serialises blobs.
 *
 * Tests script the next answers; once the script is used up, `respond`
 * (default: a short paragraph) answers.
 */
type BedrockAnswer =
  /** A model answer; `stopReason` defaults to end_turn, usage to a token count derived from the text. */
  | { kind: 'text'; text: string; stopReason?: string; inputTokens?: number; outputTokens?: number; delayMs?: number }
  /** A modelled error; the status defaults to the one Bedrock uses for that type. */
  | { kind: 'error'; type: string; status?: number; message?: string }
  /** Resets the stream without answering. */
  | { kind: 'drop' };

/** The request fields tests look at, decoded. */
type ConverseRequest = {
  modelId: string;
  headers: http2.IncomingHttpHeaders;
  system: string[];
  /** user texts in order */
  texts: string[];
  documents: { format: string; name: string; bytes: Buffer }[];
  inferenceConfig: { maxTokens?: number; temperature?: number; topP?: number };
  json: Record<string, unknown>;
};

/** HTTP status Bedrock answers each Converse error type with (client-bedrock-runtime schemas; credential errors from the signing front end). */
const BEDROCK_ERROR_STATUS: Record<string, number> = {
  AccessDeniedException: 403,
  InternalServerException: 500,
  ModelErrorException: 424,
  ModelNotReadyException: 429,
  ModelTimeoutException: 408,
  ResourceNotFoundException: 404,
  ServiceUnavailableException: 503,
  ThrottlingException: 429,
  ValidationException: 400,
  UnrecognizedClientException: 403,
};

const DEFAULT_MESSAGES: Record<string, string> = {
  ThrottlingException: 'Too many requests, please wait before trying again.',
  ServiceUnavailableException: 'Bedrock is unable to process your request.',
  InternalServerException: 'The server encountered an error processing your request.',
  ValidationException: 'The provided request is not valid',
  ModelTimeoutException: 'Model has timed out in processing the request. Try your request again.',
};

export type BedrockFake = {
  url: string;
  requests: ConverseRequest[];
  next: (...answers: BedrockAnswer[]) => void;
  /** Answers requests once the script is empty. */
  respond: (answer: ((request: ConverseRequest) => BedrockAnswer) | undefined) => void;
  reset: () => void;
  close: () => Promise<void>;
};

type WireContentBlock = { text?: string; document?: { format?: string; name?: string; source?: { bytes?: string } } };

function decode(modelId: string, headers: http2.IncomingHttpHeaders, json: Record<string, unknown>): ConverseRequest {
  const messages = (json.messages as { role: string; content: WireContentBlock[] }[] | undefined) ?? [];
  const userBlocks = messages.filter((message) => message.role === 'user').flatMap((message) => message.content);
  return {
    modelId,
    headers,
    system: ((json.system as { text?: string }[] | undefined) ?? []).map((block) => block.text ?? ''),
    texts: userBlocks.filter((block) => typeof block.text === 'string').map((block) => block.text!),
    documents: userBlocks
      .filter((block) => block.document)
      .map((block) => ({
        format: block.document!.format ?? '',
        name: block.document!.name ?? '',
        bytes: Buffer.from(block.document!.source?.bytes ?? '', 'base64'),
      })),
    inferenceConfig: (json.inferenceConfig as ConverseRequest['inferenceConfig'] | undefined) ?? {},
    json,
  };
}

export async function startBedrockFake(): Promise<BedrockFake> {
  const requests: ConverseRequest[] = [];
  const script = answerScript<BedrockAnswer>();
  const defaultRespond = (): BedrockAnswer => ({ kind: 'text', text: '<p>Converted page.</p>' });
  let respond: (request: ConverseRequest) => BedrockAnswer = defaultRespond;

  const reply = (res: http2.Http2ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomBytes(16).toString('hex'), ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: http2.Http2ServerResponse, type: string, status: number, message: string) =>
    reply(res, status, { message }, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });

  const server = http2.createServer(async (req, res) => handle(req, res, (await readRequest(req)).json));

  function handle(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, body: unknown) {
    const match = /^\/model\/([^/]+)\/converse$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return sendError(res, 'UnknownOperationException', 404, 'Unknown operation');
    if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) {
      return sendError(res, 'UnrecognizedClientException', 403, 'The security token included in the request is invalid.');
    }
    if (typeof body !== 'object' || body === null) return sendError(res, 'ValidationException', 400, 'Malformed input request');
    const json = body as Record<string, unknown>;
    const request = decode(decodeURIComponent(match[1]!), req.headers, json);
    requests.push(request);
    if (!Array.isArray(json.messages) || json.messages.length === 0) {
      return sendError(res, 'ValidationException', 400, 'A conversation must start with a user message.');
    }
    const answer = script.take() ?? respond(request);
    if (answer.kind === 'drop') {
      req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    if (answer.kind === 'error') {
      const status = answer.status ?? BEDROCK_ERROR_STATUS[answer.type] ?? 400;
      return sendError(res, answer.type, status, answer.message ?? DEFAULT_MESSAGES[answer.type] ?? `${answer.type} (fake)`);
    }
    const inputTokens = answer.inputTokens ?? 1500;
    const outputTokens = answer.outputTokens ?? Math.ceil(answer.text.length / 4);
    const ok = () =>
      reply(res, 200, {
        output: { message: { role: 'assistant', content: answer.text === '' ? [] : [{ text: answer.text }] } },
        stopReason: answer.stopReason ?? 'end_turn',
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        metrics: { latencyMs: answer.delayMs ?? 12 },
      });
    if (answer.delayMs) answerLater(res, answer.delayMs, ok);
    else ok();
  }

  const { url, close } = await listen(server);
  return {
    url,
    requests,
    next: script.next,
    respond: (fn) => {
      respond = fn ?? defaultRespond;
    },
    reset: () => {
      requests.length = 0;
      script.clear();
      respond = defaultRespond;
    },
    close,
  };
}
