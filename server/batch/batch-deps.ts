import { PutBucketLifecycleConfigurationCommand, S3Client } from '@aws-sdk/client-s3';
import type { Deps } from '../deps.ts';
import type { Log } from '../log.ts';
import { createS3Store } from '../storage/s3-store.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { type BatchControl, createBatchControl } from './bedrock-batch.ts';
import { BATCH_PREFIX_ROOT } from './batch.queries.ts';
import { cloudCredentials } from '../cloud-credentials.ts';
import { BATCH_OBJECT_DAYS } from './sweep-batch-objects.ts';

/**
 * What the driver takes: the service's own dependencies, the Bedrock control
 * plane, and the batch bucket (`BATCH_CONVERSION_S3_BUCKET`, reached like the
 * S3 storage driver: `S3_ENDPOINT`, `S3_FORCE_PATH_STYLE`).
 */
export type BatchDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'log' | 'clock' | 'store'> & {
  control: BatchControl;
  batchStore: ObjectStore;
  /** the batch bucket's name, for the s3:// addresses Bedrock reads and writes */
  bucket: string;
  /** tests lower the input ceiling (about 4.5 GB) instead of writing gigabytes */
  maxInputBytes?: number;
};

export function createBatchDeps(deps: Pick<Deps, 'db' | 'boss' | 'config' | 'log' | 'clock' | 'store'>): BatchDeps & { s3: S3Client } {
  const { config } = deps;
  const bucket = config.batch.bucket;
  if (!bucket) throw new Error('the batch lane needs BATCH_CONVERSION_S3_BUCKET');
  const { bedrock } = config.conversion;
  const s3 = new S3Client({
    region: config.storage.s3.region,
    endpoint: config.storage.s3.endpoint,
    forcePathStyle: config.storage.s3.forcePathStyle,
    credentials: cloudCredentials(bedrock),
  });
  return { ...deps, control: createBatchControl(bedrock), batchStore: createS3Store({ bucket, client: s3 }), bucket, s3 };
}

/**
 * The bucket's lifecycle rule: everything the lane writes expires after 14
 * days. Set when the driver starts; a bucket that refuses (no permission, a
 * server without lifecycle support) is logged, not fatal: the lane still works.
 */
export async function ensureBatchLifecycle(s3: S3Client, bucket: string, log: Log): Promise<boolean> {
  try {
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: bucket,
        LifecycleConfiguration: {
          Rules: [{ ID: 'folio-batch-expiry', Status: 'Enabled', Filter: { Prefix: `${BATCH_PREFIX_ROOT}/` }, Expiration: { Days: BATCH_OBJECT_DAYS } }],
        },
      }),
    );
    return true;
  } catch (error) {
    log.warn({ err: error, bucket }, `the batch bucket's ${BATCH_OBJECT_DAYS}-day expiry rule could not be set`);
    return false;
  }
}
