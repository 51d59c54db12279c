import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { checkPublicHttpsUrl, forbiddenAddressReason, type AddressPolicy } from '../net/address-policy.ts';

/**
 * A customer's bucket, reached with the customer's credentials: the one module
 * that speaks S3 (and STS, for roles) on a customer's behalf. The service's
 * own object store is server/storage/s3-store.ts; this one never touches it.
 *
 * A customer may name an endpoint (an S3-compatible store). That is an
 * address a customer chose, so it is held to the webhooks' rule: public HTTPS
 * only, checked when the connection is saved and again on every connect (the
 * sockets' lookup refuses a name that now resolves to private space).
 */

type BucketCredentials =
  | { kind: 'keys'; accessKeyId: string; secretAccessKey: string }
  /** AssumeRole with the owner's external id (the confused-deputy guard AWS recommends for third parties). */
  | { kind: 'role'; roleArn: string; externalId: string; sessionName: string };

export type BucketAccess = { bucket: string; region: string; endpoint?: string; credentials: BucketCredentials };

export type BucketOptions = {
  policy: AddressPolicy;
  /** Per S3 call: connect plus the whole answer. */
  timeoutMs: number;
  /** Where AssumeRole goes (tests); unset: AWS's regional STS. */
  stsEndpoint?: string;
  /** Our own credentials for AssumeRole; unset: the SDK's default chain. */
  serviceCredentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Assumed-role sessions kept per process, by role, external id and session name, so 30 imports are one AssumeRole. */
  sessions?: Map<string, AssumedSession>;
};

type AssumedSession = { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date };

/** A cached session is used until this close to its end, so no call starts with a token about to lapse. */
const SESSION_MARGIN_MS = 2 * 60 * 1000;

export type BucketObject = { key: string; etag: string; size: number };

/** What the bucket (or STS) answered, kept exact: the customer fixes their policy from it. */
export class BucketError extends Error {
  override name = 'BucketError';
  readonly awsCode: string;
  readonly httpStatus: number | undefined;
  constructor(awsCode: string, message: string, httpStatus: number | undefined, options: { cause?: unknown } = {}) {
    super(message, options);
    this.awsCode = awsCode;
    this.httpStatus = httpStatus;
  }
}

function toBucketError(error: unknown): BucketError {
  if (error instanceof BucketError) return error;
  const e = error as { name?: string; Code?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const code = e?.Code ?? (e?.name && e.name !== 'Error' ? e.name : undefined) ?? e?.code ?? 'NetworkError';
  return new BucketError(code, e?.message || String(error), status, { cause: error });
}

/** One line a person can act on: "AccessDenied (HTTP 403): Access Denied". */
export function describeBucketError(error: BucketError): string {
  return `${error.awsCode}${error.httpStatus ? ` (HTTP ${error.httpStatus})` : ''}: ${error.message}`.slice(0, 1000);
}

const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

/** Why this endpoint may not be used, or undefined. No network: the connect-time lookup checks the addresses. */
export function endpointRejection(endpoint: string, policy: AddressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'not a valid URL';
  }
  if (url.pathname !== '/' || url.search || url.hash) return 'the endpoint must be an origin (no path, query or fragment)';
  // The test suite's s3rver speaks plain HTTP on loopback; only its test-only switch lets that through.
  if (policy.allowLoopback && url.protocol === 'http:' && isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ''))) return undefined;
  const check = checkPublicHttpsUrl(endpoint, policy);
  return check.ok ? undefined : check.reason;
}

/** A lookup that hands the socket only addresses the policy allows (no rebinding to private space between save and use). */
function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (host, options, callback) => {
    dns.lookup(host, { all: true, verbatim: true, family: options.family }, (error, addresses) => {
      if (error) return (callback as (error: Error) => void)(error);
      const bad = addresses.find((entry) => forbiddenAddressReason(entry.address, policy));
      if (bad || addresses.length === 0) {
        const refusal = Object.assign(new Error(`${host} resolves to ${bad?.address ?? 'nothing'}, which is not a public address`), { code: 'EADDRREFUSED' });
        return (callback as (error: Error) => void)(refusal);
      }
      if (options.all) (callback as (error: null, list: typeof addresses) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export type CustomerBucket = ReturnType<typeof openCustomerBucket>;

/**
 * A client for one connection. Throws BucketError for every failure the bucket
 * or the network reports; the caller decides what the customer is told.
 */
export function openCustomerBucket(access: BucketAccess, options: BucketOptions) {
  if (access.endpoint) {
    const reason = endpointRejection(access.endpoint, options.policy);
    if (reason) throw new BucketError('EndpointRejected', reason, undefined);
  }
  const lookup = guardedLookup(options.policy);
  const requestHandler = {
    requestTimeout: options.timeoutMs,
    connectionTimeout: Math.min(options.timeoutMs, 10_000),
    httpAgent: new http.Agent({ keepAlive: true, lookup }),
    httpsAgent: new https.Agent({ keepAlive: true, lookup }),
  };
  const { credentials } = access;
  let sts: STSClient | undefined;
  const provider =
    credentials.kind === 'keys'
      ? { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey }
      : async () => {
          const cacheKey = `${credentials.roleArn}|${credentials.externalId}|${credentials.sessionName}`;
          const cached = options.sessions?.get(cacheKey);
          if (cached?.expiration && cached.expiration.getTime() - SESSION_MARGIN_MS > Date.now()) return cached;
          sts ??= new STSClient({ region: access.region, endpoint: options.stsEndpoint, credentials: options.serviceCredentials });
          try {
            const answer = await sts.send(
              new AssumeRoleCommand({
                RoleArn: credentials.roleArn,
                RoleSessionName: credentials.sessionName,
                ExternalId: credentials.externalId,
                // The shortest session AWS allows: a connection's work is minutes, and a leaked token dies soon.
                DurationSeconds: 900,
              }),
            );
            const issued = answer.Credentials;
            if (!issued?.AccessKeyId || !issued.SecretAccessKey) throw new BucketError('AssumeRoleFailed', 'STS returned no credentials', undefined);
            const session = {
              accessKeyId: issued.AccessKeyId,
              secretAccessKey: issued.SecretAccessKey,
              sessionToken: issued.SessionToken,
              expiration: issued.Expiration,
            };
            if (options.sessions) {
              // Bounded by the role connections in use: lapsed sessions go before a new one is kept.
              for (const [key, kept] of options.sessions) if (!kept.expiration || kept.expiration.getTime() <= Date.now()) options.sessions.delete(key);
              options.sessions.set(cacheKey, session);
            }
            return session;
          } catch (error) {
            throw toBucketError(error);
          }
        };
  const client = new S3Client({
    region: access.region,
    endpoint: access.endpoint,
    // Custom endpoints (MinIO, R2, s3rver) rarely have a wildcard certificate for virtual-hosted buckets.
    forcePathStyle: Boolean(access.endpoint),
    credentials: provider,
    requestHandler,
    maxAttempts: 2,
  });
  const Bucket = access.bucket;

  async function call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toBucketError(error);
    }
  }

  return {
    /** The SDK client, for writes through the object-store driver (multipart streaming): server/storage/s3-store.ts. */
    client,
    /**
     * One page of objects under `prefix` (at most `maxKeys`, which S3 caps at 1000), in key order,
     * after `startAfter` when given. `next` is the key to start after for the following page.
     */
    list(prefix: string, page: { startAfter?: string; maxKeys: number }): Promise<{ objects: BucketObject[]; next?: string }> {
      return call(async () => {
        const answer = await client.send(
          new ListObjectsV2Command({ Bucket, Prefix: prefix || undefined, StartAfter: page.startAfter, MaxKeys: Math.min(1000, page.maxKeys) }),
        );
        const objects = (answer.Contents ?? [])
          .filter((item) => item.Key)
          .map((item) => ({ key: item.Key!, etag: (item.ETag ?? '').replace(/^"|"$/g, ''), size: item.Size ?? 0 }));
        return { objects, next: answer.IsTruncated ? objects.at(-1)?.key : undefined };
      });
    },
    /** The object as a stream, pinned to the ETag we listed (a changed object is not silently imported under the old one). */
    get(key: string, etag?: string): Promise<{ body: Readable; size: number; etag: string }> {
      return call(async () => {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: key, IfMatch: etag ? `"${etag}"` : undefined }));
        const got = (answer.ETag ?? '').replace(/^"|"$/g, '');
        // Stores that ignore If-Match (some S3-compatible ones) still name the version they sent.
        if (etag && got && got !== etag) {
          (answer.Body as Readable | undefined)?.destroy();
          throw new BucketError('PreconditionFailed', `At least one of the pre-conditions you specified did not hold (ETag is now ${got})`, 412);
        }
        return { body: answer.Body as Readable, size: answer.ContentLength ?? 0, etag: got };
      });
    },
    close(): void {
      client.destroy();
      sts?.destroy();
      requestHandler.httpAgent.destroy();
      requestHandler.httpsAgent.destroy();
    },
  };
}
