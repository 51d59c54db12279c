import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { listen, readRequest } from './fake-server.ts';

/**
 * A local Amazon Bedrock control plane for batch inference, so
 * `@aws-sdk/client-bedrock` can be driven against it (restJson1 over
 * HTTP/1.1): `POST /model-invocation-job` (CreateModelInvocationJob),
 * `GET /model-invocation-job/{id}`, `POST /model-invocation-job/{id}/stop`,
 * `GET /model-invocation-jobs?nameContains=`. Errors carry `x-amzn-errortype`
 * and `{"message"}`. Jobs stay where they are until the test moves them
 * (`setStatus`), or runs them (`complete`): like Bedrock, that reads every
 * JSONL file under the input S3 prefix and writes `<file>.out` under
 * `<output prefix>/<job id>/`, each line echoing `recordId` and `modelInput`
 * with `modelOutput` (the Anthropic Messages answer) or `error`, and
 * GetModelInvocationJob then reports the record counts.
 */

export type RecordAnswer =
  | { kind: 'text'; text: string; stopReason?: string; inputTokens?: number; outputTokens?: number; guardrail?: boolean }
  | { kind: 'error'; code?: number; message?: string }
  /** the record is left out of the output, as happens when a job stops or expires part-way */
  | { kind: 'missing' };

type FakeJob = {
  jobArn: string;
  jobName: string;
  modelId: string;
  roleArn: string;
  status: string;
  message?: string;
  clientRequestToken?: string;
  timeoutDurationInHours: number;
  inputS3Uri: string;
  outputS3Uri: string;
  submitTime: string;
  /** what GetModelInvocationJob reports once the job has run (set by `complete`) */
  counts?: { total: number; processed: number; success: number; error: number };
};

export type BedrockBatchFake = {
  url: string;
  jobs: Map<string, FakeJob>;
  requests: Array<{ method: string; path: string; body: Record<string, unknown> }>;
  /** The next call of this operation answers with this error. */
  failNext: (operation: 'create' | 'get' | 'stop' | 'list', type: string, status?: number) => void;
  setStatus: (jobArn: string, status: string, message?: string) => void;
  /** Runs the job: writes its output files from `answer` per record, then sets the final status. */
  complete: (jobArn: string, answer: (recordId: string) => RecordAnswer, status?: string) => Promise<void>;
  close: () => Promise<void>;
};

const ERROR_STATUS: Record<string, number> = {
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  ConflictException: 409,
  ThrottlingException: 429,
  InternalServerException: 500,
  ServiceUnavailableException: 503,
};

const FINAL = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);

function splitS3Uri(uri: string) {
  const match = /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);
  if (!match) throw new Error(`not an s3 uri: ${uri}`);
  return { bucket: match[1]!, prefix: match[2]! };
}

export async function startBedrockBatchFake(options: { s3: S3Client; account?: string; region?: string }): Promise<BedrockBatchFake> {
  const account = options.account ?? '123456789012';
  const region = options.region ?? 'us-east-1';
  const jobs = new Map<string, FakeJob>();
  const requests: BedrockBatchFake['requests'] = [];
  const failures = new Map<string, { type: string; status: number }>();

  const reply = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomBytes(16).toString('hex'), ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: http.ServerResponse, type: string, message: string, status = ERROR_STATUS[type] ?? 400) =>
    reply(res, status, { message }, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
  const view = (job: FakeJob) => ({
    jobArn: job.jobArn,
    jobName: job.jobName,
    modelId: job.modelId,
    roleArn: job.roleArn,
    status: job.status,
    ...(job.message ? { message: job.message } : {}),
    submitTime: job.submitTime,
    ...(job.counts
      ? {
          totalRecordCount: job.counts.total,
          processedRecordCount: job.counts.processed,
          successRecordCount: job.counts.success,
          errorRecordCount: job.counts.error,
        }
      : {}),
    timeoutDurationInHours: job.timeoutDurationInHours,
    inputDataConfig: { s3InputDataConfig: { s3Uri: job.inputS3Uri, s3InputFormat: 'JSONL' } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: job.outputS3Uri } },
  });
  const find = (identifier: string) => jobs.get(identifier) ?? [...jobs.values()].find((job) => job.jobArn.endsWith(`/${identifier}`));

  function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = decodeURIComponent(url.pathname);
    let body: Record<string, unknown> = {};
    if (raw) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return sendError(res, 'ValidationException', 'Malformed request body');
      }
    }
    requests.push({ method: req.method ?? '', path: `${path}${url.search}`, body });
    if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) {
      return sendError(res, 'UnrecognizedClientException', 'The security token included in the request is invalid.', 403);
    }
    const operation =
      req.method === 'POST' && path === '/model-invocation-job'
        ? 'create'
        : req.method === 'GET' && path === '/model-invocation-jobs'
          ? 'list'
          : req.method === 'POST' && /^\/model-invocation-job\/.+\/stop$/.test(path)
            ? 'stop'
            : req.method === 'GET' && /^\/model-invocation-job\/.+$/.test(path)
              ? 'get'
              : undefined;
    if (!operation) return sendError(res, 'UnknownOperationException', 'Unknown operation', 404);
    const failure = failures.get(operation);
    if (failure) {
      failures.delete(operation);
      return sendError(res, failure.type, `${failure.type} (fake)`, failure.status);
    }

    if (operation === 'create') {
      const input = body as {
        jobName?: string;
        roleArn?: string;
        modelId?: string;
        clientRequestToken?: string;
        timeoutDurationInHours?: number;
        inputDataConfig?: { s3InputDataConfig?: { s3Uri?: string } };
        outputDataConfig?: { s3OutputDataConfig?: { s3Uri?: string } };
      };
      const inputUri = input.inputDataConfig?.s3InputDataConfig?.s3Uri ?? '';
      const outputUri = input.outputDataConfig?.s3OutputDataConfig?.s3Uri ?? '';
      if (!input.jobName || !/^[a-zA-Z0-9](-*[a-zA-Z0-9+\-.])*$/.test(input.jobName) || input.jobName.length > 63) {
        return sendError(res, 'ValidationException', 'jobName is invalid');
      }
      if (!input.roleArn?.startsWith('arn:aws:iam::')) return sendError(res, 'ValidationException', 'roleArn is invalid');
      if (!input.modelId) return sendError(res, 'ValidationException', 'modelId is required');
      if (!inputUri.startsWith('s3://') || !outputUri.startsWith('s3://')) return sendError(res, 'ValidationException', 's3Uri must be an s3:// address');
      const hours = input.timeoutDurationInHours ?? 168;
      if (!Number.isInteger(hours) || hours < 24 || hours > 168) {
        return sendError(res, 'ValidationException', 'timeoutDurationInHours must be between 24 and 168');
      }
      const same = [...jobs.values()].find((job) => input.clientRequestToken && job.clientRequestToken === input.clientRequestToken);
      if (same) return reply(res, 200, { jobArn: same.jobArn });
      if ([...jobs.values()].some((job) => job.jobName === input.jobName)) {
        return sendError(res, 'ConflictException', `A job named ${input.jobName} already exists`);
      }
      const id = randomUUID().replaceAll('-', '').slice(0, 12);
      const job: FakeJob = {
        jobArn: `arn:aws:bedrock:${region}:${account}:model-invocation-job/${id}`,
        jobName: input.jobName,
        modelId: input.modelId,
        roleArn: input.roleArn,
        status: 'Submitted',
        clientRequestToken: input.clientRequestToken,
        timeoutDurationInHours: hours,
        inputS3Uri: inputUri,
        outputS3Uri: outputUri,
        submitTime: new Date().toISOString(),
      };
      jobs.set(job.jobArn, job);
      return reply(res, 200, { jobArn: job.jobArn });
    }
    if (operation === 'list') {
      const contains = url.searchParams.get('nameContains') ?? '';
      return reply(res, 200, { invocationJobSummaries: [...jobs.values()].filter((job) => job.jobName.includes(contains)).map(view) });
    }
    const identifier = path.replace(/^\/model-invocation-job\//, '').replace(/\/stop$/, '');
    const job = find(identifier);
    if (!job) return sendError(res, 'ResourceNotFoundException', `Job ${identifier} not found`);
    if (operation === 'get') return reply(res, 200, view(job));
    if (FINAL.has(job.status)) return sendError(res, 'ValidationException', `Job in status ${job.status} cannot be stopped`);
    job.status = 'Stopping';
    return reply(res, 200, {});
  }

  async function complete(jobArn: string, answer: (recordId: string) => RecordAnswer, status = 'Completed') {
    const job = jobs.get(jobArn);
    if (!job) throw new Error(`no job ${jobArn}`);
    const source = splitS3Uri(job.inputS3Uri);
    const target = splitS3Uri(job.outputS3Uri);
    const listed = await options.s3.send(new ListObjectsV2Command({ Bucket: source.bucket, Prefix: source.prefix }));
    const jobId = jobArn.slice(jobArn.lastIndexOf('/') + 1);
    const counts = { total: 0, processed: 0, success: 0, error: 0 };
    for (const object of listed.Contents ?? []) {
      if (!object.Key?.endsWith('.jsonl')) continue;
      const input = await options.s3.send(new GetObjectCommand({ Bucket: source.bucket, Key: object.Key }));
      const text = await input.Body!.transformToString();
      const out: string[] = [];
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        const record = JSON.parse(line) as { recordId: string; modelInput: unknown };
        const result = answer(record.recordId);
        counts.total++;
        if (result.kind === 'missing') continue;
        counts.processed++;
        counts[result.kind === 'error' ? 'error' : 'success']++;
        if (result.kind === 'error') {
          out.push(JSON.stringify({ ...record, error: { errorCode: result.code ?? 400, errorMessage: result.message ?? 'Malformed input request' } }));
          continue;
        }
        const inputTokens = result.inputTokens ?? 1500;
        const outputTokens = result.outputTokens ?? Math.ceil(result.text.length / 4);
        out.push(
          JSON.stringify({
            ...record,
            modelOutput: {
              id: `msg_${randomBytes(8).toString('hex')}`,
              type: 'message',
              role: 'assistant',
              model: job.modelId,
              content: result.text === '' ? [] : [{ type: 'text', text: result.text }],
              stop_reason: result.stopReason ?? 'end_turn',
              stop_sequence: null,
              usage: { input_tokens: inputTokens, output_tokens: outputTokens },
              ...(result.guardrail ? { 'amazon-bedrock-guardrailAction': 'INTERVENED' } : {}),
            },
          }),
        );
      }
      const name = object.Key.slice(object.Key.lastIndexOf('/') + 1);
      await options.s3.send(
        new PutObjectCommand({ Bucket: target.bucket, Key: `${target.prefix.replace(/\/?$/, '/')}${jobId}/${name}.out`, Body: `${out.join('\n')}\n` }),
      );
    }
    job.status = status;
    job.counts = counts;
  }

  const server = http.createServer(async (req, res) => handle(req, res, (await readRequest(req)).body));
  const listening = await listen(server);
  return {
    url: listening.url,
    jobs,
    requests,
    failNext: (operation, type, status) => void failures.set(operation, { type, status: status ?? ERROR_STATUS[type] ?? 400 }),
    setStatus: (jobArn, status, message) => {
      const job = jobs.get(jobArn);
      if (!job) throw new Error(`no job ${jobArn}`);
      job.status = status;
      job.message = message;
    },
    complete,
    close: listening.close,
  };
}
