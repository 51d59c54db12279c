-- The batch lane (specification: "Batch-lane resources", "Batch row"). One
-- conversion_batch_jobs row per conversion job at most; its state moves
-- preparing -> submitted -> closed, or straight to closed when a user acts
-- before the driver claims the job. A closed row carries its sub-outcome.

create table conversion_batch_jobs (
  id uuid primary key default gen_random_uuid(),
  -- set null, not cascade: deleting the file must not lose the row of a remote job still running
  job_id uuid references large_conversion_jobs (id) on delete set null,
  state text not null default 'preparing' check (state in ('preparing', 'submitted', 'closed')),
  outcome text check (outcome in ('collected', 'skipped', 'failed', 'expired')),
  -- a user's reason (cancel, process now, file deleted) or why the driver closed the row
  reason text,
  -- 'folio-batch-<row id>': how a stuck preparing row finds a job it may already have created
  job_name text not null,
  job_arn text,
  model_id text,
  prompt_hash text,
  records integer,
  shards integer,
  input_bytes bigint,
  accepted integer,
  fallback integer,
  cost_usd numeric(14, 6),
  remote_status text,
  collect_attempts integer not null default 0,
  claimed_at timestamptz not null,
  submitted_at timestamptz,
  -- submit time + timeout + 2 hours: past it the driver gives up on the remote job
  deadline_at timestamptz,
  next_poll_at timestamptz,
  closed_at timestamptz,
  constraint conversion_batch_jobs_outcome check ((state = 'closed') = (outcome is not null)),
  constraint conversion_batch_jobs_arn check (state <> 'submitted' or job_arn is not null)
);
-- At most one row per conversion job: the driver's claim and a user's early close race on it.
create unique index conversion_batch_jobs_job_idx on conversion_batch_jobs (job_id);
create index conversion_batch_jobs_open_idx on conversion_batch_jobs (state, next_poll_at) where state <> 'closed';

-- One batch cost row per remote batch job, however many drivers race to close it.
create unique index cost_ledger_batch_job_idx on cost_ledger ((metadata ->> 'batchJobArn')) where source = 'batch-lane';

-- waiting_batch -> pending for the job and its chunks in one transaction, the
-- hold back to the on-demand window, the file's phase reset; `_batchPrimed`
-- set when the batch results are there to reuse. Returns the chunks to queue
-- (none when the job was no longer waiting: a second resume does nothing).
create function resume_batch_conversion_job(p_job_id uuid, p_primed boolean, p_hold_window interval)
returns table (chunk_id uuid)
language plpgsql as $$
declare
  v_job large_conversion_jobs;
begin
  select * into v_job from large_conversion_jobs where id = p_job_id for update;
  if not found or v_job.status <> 'waiting_batch' then
    return;
  end if;
  update large_conversion_jobs
     set status = 'pending', updated_at = now(),
         options = case when p_primed then options || '{"_batchPrimed": true}'::jsonb else options - '_batchPrimed' end
   where id = p_job_id;
  if v_job.hold_id is not null then
    update credit_holds set expires_at = now() + p_hold_window where id = v_job.hold_id and status = 'held';
  end if;
  update files set phase = format('Queued: 0/%s chunks', v_job.total_chunks), updated_at = now() where id = v_job.file_id;
  perform pg_notify('folio_conversion', json_build_object('fileId', v_job.file_id, 'jobId', v_job.id, 'event', 'progress')::text);
  return query update chunk_jobs set status = 'pending' where job_id = p_job_id and status = 'waiting_batch' returning id;
end $$;
