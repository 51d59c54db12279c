-- Batch storage objects expire after 14 days (specification: "Batch storage
-- objects"). The batch bucket has its S3 lifecycle rule; the results files the
-- lane leaves in the service's object store (the filesystem driver by
-- default, which has no lifecycle rules) are removed by the batch.sweep job,
-- which marks each closed row once its objects are gone.
alter table conversion_batch_jobs add column swept_at timestamptz;
create index conversion_batch_jobs_sweep_idx on conversion_batch_jobs (closed_at) where state = 'closed' and swept_at is null;
