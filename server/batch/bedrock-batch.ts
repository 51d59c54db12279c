import {
  BedrockClient,
  CreateModelInvocationJobCommand,
  GetModelInvocationJobCommand,
  ListModelInvocationJobsCommand,
  StopModelInvocationJobCommand,
} from '@aws-sdk/client-bedrock';
import type { Config } from '../config.ts';
import type { VisionPrompt } from '../conversion/backends/vision/prompt.ts';
import { cloudCredentials } from '../cloud-credentials.ts';

/**
 * Amazon Bedrock batch inference, the one module that owns its wire format:
 * the control plane (CreateModelInvocationJob, Get, Stop, List by name) and
 * the JSONL records. A record's `modelInput` is the model's InvokeModel body
 * (Anthropic Messages for the default Claude model); the output line echoes
 * it with `modelOutput` (the InvokeModel answer) or `error`.
 */

type RemoteJobStatus =
  | 'Submitted'
  | 'InProgress'
  | 'Completed'
  | 'Failed'
  | 'Stopping'
  | 'Stopped'
  | 'PartiallyCompleted'
  | 'Expired'
  | 'Validating'
  | 'Scheduled';

/** The record counts GetModelInvocationJob reports (absent until the job has run). */
type RemoteCounts = { total?: number; processed?: number; success?: number; error?: number };

export type RemoteJob = { jobArn: string; jobName?: string; status: RemoteJobStatus; message?: string; counts?: RemoteCounts };

export type BatchControl = {
  createJob(input: {
    jobName: string;
    modelId: string;
    roleArn: string;
    inputS3Uri: string;
    outputS3Uri: string;
    timeoutHours: number;
    clientRequestToken: string;
  }): Promise<string>;
  getJob(jobArn: string): Promise<RemoteJob>;
  stopJob(jobArn: string): Promise<void>;
  /** The job of exactly this name, if the account has one. */
  findJob(jobName: string): Promise<RemoteJob | undefined>;
};

/** Remote states after which the job will not change again. */
export const FINAL_REMOTE_STATES: ReadonlySet<string> = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);

/** Bedrock accepts 24 to 168 hours for a batch job's timeout. */
function clampTimeoutHours(hours: number) {
  return Math.min(168, Math.max(24, Math.round(hours)));
}

export function createBatchControl(bedrock: Config['conversion']['bedrock']): BatchControl {
  const client = new BedrockClient({
    region: bedrock.region,
    endpoint: bedrock.controlEndpoint,
    credentials: cloudCredentials(bedrock),
  });
  const remote = (job: {
    jobArn?: string;
    jobName?: string;
    status?: string;
    message?: string;
    totalRecordCount?: number;
    processedRecordCount?: number;
    successRecordCount?: number;
    errorRecordCount?: number;
  }): RemoteJob => ({
    jobArn: job.jobArn ?? '',
    jobName: job.jobName,
    status: (job.status ?? 'Submitted') as RemoteJobStatus,
    message: job.message,
    counts: {
      total: job.totalRecordCount,
      processed: job.processedRecordCount,
      success: job.successRecordCount,
      error: job.errorRecordCount,
    },
  });
  return {
    async createJob(input) {
      const created = await client.send(
        new CreateModelInvocationJobCommand({
          jobName: input.jobName,
          modelId: input.modelId,
          roleArn: input.roleArn,
          // the token makes a retried create (a lost answer) return the same job instead of a second one
          clientRequestToken: input.clientRequestToken,
          timeoutDurationInHours: clampTimeoutHours(input.timeoutHours),
          inputDataConfig: { s3InputDataConfig: { s3Uri: input.inputS3Uri, s3InputFormat: 'JSONL' } },
          outputDataConfig: { s3OutputDataConfig: { s3Uri: input.outputS3Uri } },
        }),
      );
      if (!created.jobArn) throw new Error('CreateModelInvocationJob answered without a job ARN');
      return created.jobArn;
    },
    async getJob(jobArn) {
      return remote(await client.send(new GetModelInvocationJobCommand({ jobIdentifier: jobArn })));
    },
    async stopJob(jobArn) {
      await client.send(new StopModelInvocationJobCommand({ jobIdentifier: jobArn }));
    },
    async findJob(jobName) {
      const listed = await client.send(new ListModelInvocationJobsCommand({ nameContains: jobName, maxResults: 10 }));
      const found = (listed.invocationJobSummaries ?? []).find((job) => job.jobName === jobName);
      return found ? remote(found) : undefined;
    },
  };
}

/** The id Bedrock names the output folder after: the last segment of the job ARN. */
export function remoteJobId(jobArn: string) {
  return jobArn.slice(jobArn.lastIndexOf('/') + 1);
}

/** One batch record's input: the same request the on-demand path sends for the page, in InvokeModel form. */
export function recordLine(recordId: string, pagePdf: Uint8Array, prompt: VisionPrompt): Buffer {
  const modelInput = {
    anthropic_version: 'bedrock-2023-05-31',
    max_tokens: prompt.maxTokens,
    temperature: prompt.temperature,
    system: prompt.system,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: Buffer.from(pagePdf).toString('base64') } },
          { type: 'text', text: prompt.text },
        ],
      },
    ],
  };
  return Buffer.from(`${JSON.stringify({ recordId, modelInput })}\n`);
}

/** A record's answer in the terms of the on-demand path (stop reasons as Converse names them), or its error. */
export type RecordOutput =
  | { recordId: string; kind: 'answer'; text: string; stopReason: string; inputTokens: number; outputTokens: number }
  | { recordId: string; kind: 'error'; error: string };

/** Anthropic's stop reasons mapped to Converse's, so one acceptance rule serves both paths. */
function converseStopReason(output: Record<string, unknown>): string {
  if (output['amazon-bedrock-guardrailAction'] === 'INTERVENED') return 'guardrail_intervened';
  const reason = typeof output.stop_reason === 'string' ? output.stop_reason : 'unknown';
  return reason === 'refusal' ? 'content_filtered' : reason;
}

/** Parses one line of a `.jsonl.out` file; undefined for a line that is not a record. */
export function parseOutputLine(line: string): RecordOutput | undefined {
  if (line.trim() === '') return undefined;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof json.recordId !== 'string') return undefined;
  const recordId = json.recordId;
  const error = json.error as { errorMessage?: unknown; errorCode?: unknown } | undefined;
  const output = json.modelOutput as Record<string, unknown> | undefined;
  if (error || !output || typeof output !== 'object') {
    return { recordId, kind: 'error', error: String(error?.errorMessage ?? error?.errorCode ?? 'no model output') };
  }
  const content = Array.isArray(output.content) ? (output.content as Array<{ type?: string; text?: unknown }>) : [];
  const usage = (output.usage ?? {}) as { input_tokens?: unknown; output_tokens?: unknown };
  return {
    recordId,
    kind: 'answer',
    text: content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join(''),
    stopReason: converseStopReason(output),
    inputTokens: Number(usage.input_tokens) || 0,
    outputTokens: Number(usage.output_tokens) || 0,
  };
}
