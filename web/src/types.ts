import type { FolioClient } from '../../client-sdk/index.ts';

export type Me = Awaited<ReturnType<FolioClient['account']['me']['query']>>;
export type FileItem = Awaited<ReturnType<FolioClient['files']['list']['query']>>['files'][number];
export type Endpoint = Awaited<ReturnType<FolioClient['webhooks']['list']['query']>>['endpoints'][number];
export type Delivery = Awaited<ReturnType<FolioClient['webhooks']['deliveries']['query']>>['deliveries'][number];
export type EmailLogPage = Awaited<ReturnType<FolioClient['admin']['emailLog']['query']>>;
export type Suppression = Awaited<ReturnType<FolioClient['admin']['emailSuppressions']['query']>>['suppressions'][number];
export type BatchLane = Awaited<ReturnType<FolioClient['conversion']['batchLane']['query']>>;
export type Figure = Awaited<ReturnType<FolioClient['figures']['list']['query']>>['figures'][number];
export type AlertSetting = Awaited<ReturnType<FolioClient['admin']['alertSettings']['query']>>['settings'][number];
