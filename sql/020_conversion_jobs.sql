-- The chunked conversion service: one large_conversion_jobs row per Convert,
-- its chunk_jobs, the cost ledger, the minimal flyer ("Preserve Formatting")
-- job table, and the one-transaction cancel. Errors use our SQLSTATE class FD:
--   FD001 no live conversion job, FD002 job is assembling (CONVERSION_FINISHING),
--   FD003 job is in a state cancel does not apply to (terminal).

create table large_conversion_jobs (
  id uuid primary key default gen_random_uuid(),
  file_id uuid not null references files (id) on delete cascade,
  owner_id uuid not null references users (id) on delete cascade,
  customer_id uuid not null references customers (id),
  status text not null default 'pending'
    check (status in ('pending', 'waiting_batch', 'processing', 'paused_budget', 'assembling', 'completed', 'failed', 'cancelled')),
  options jsonb not null default '{}',
  total_pages integer not null check (total_pages > 0),
  total_chunks integer not null check (total_chunks > 0),
  hold_id uuid references credit_holds (id),
  credits_charged integer,
  -- chunk costs (chunk-scheduler ledger rows) plus options._batchCostUsd
  total_cost_usd numeric(14, 6) not null default 0,
  result_key text,
  error_code text,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz
);
-- At most one live job per file; terminal jobs stay as history.
create unique index large_conversion_jobs_live_file_idx on large_conversion_jobs (file_id)
  where status not in ('completed', 'failed', 'cancelled');
create index large_conversion_jobs_file_idx on large_conversion_jobs (file_id, created_at desc);
create index large_conversion_jobs_status_idx on large_conversion_jobs (status, updated_at)
  where status not in ('completed', 'failed', 'cancelled');

create table chunk_jobs (
  id uuid primary key default gen_random_uuid(),
  job_id uuid not null references large_conversion_jobs (id) on delete cascade,
  chunk_index integer not null check (chunk_index >= 0),
  page_start integer not null check (page_start >= 1),
  page_end integer not null,
  status text not null default 'pending'
    check (status in ('pending', 'waiting_batch', 'processing', 'completed', 'failed', 'cancelled')),
  attempt integer not null default 0,
  -- which run owns the chunk; a re-queued chunk gets a new one, so a stale worker's guarded updates match nothing
  run_id uuid,
  heartbeat_at timestamptz,
  pages_done integer not null default 0,
  result_key text,
  cost_usd numeric(14, 6) not null default 0,
  error text,
  started_at timestamptz,
  completed_at timestamptz,
  constraint chunk_jobs_pages check (page_end >= page_start),
  constraint chunk_jobs_job_index_key unique (job_id, chunk_index)
);
create index chunk_jobs_processing_idx on chunk_jobs (heartbeat_at) where status = 'processing';

create table cost_ledger (
  id bigserial primary key,
  source text not null,
  job_id uuid references large_conversion_jobs (id) on delete set null,
  chunk_id uuid references chunk_jobs (id) on delete set null,
  cost_usd numeric(14, 6) not null default 0,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index cost_ledger_job_idx on cost_ledger (job_id);

-- Minimal "Preserve Formatting" (flyer) jobs: enough for the comp link and its own cancel.
create table flyer_jobs (
  id uuid primary key default gen_random_uuid(),
  file_id uuid references files (id) on delete set null,
  owner_id uuid not null references users (id) on delete cascade,
  customer_id uuid not null references customers (id),
  status text not null default 'pending' check (status in ('pending', 'processing', 'completed', 'failed')),
  -- the worker run holding the job; cancel clears it so a still-running worker's guarded writes match nothing
  claim_id uuid,
  comp_conversion_id uuid references large_conversion_jobs (id) on delete set null,
  credits_charged integer not null default 0,
  refunded boolean not null default false,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Cancel in one transaction: job and every non-completed chunk to cancelled,
-- hold released (outcome cancelled), file reset to uploaded (unless the caller
-- is deleting the file), the comped flyer job's link cleared, listeners told.
create function cancel_conversion_job(p_job_id uuid, p_reset_file boolean default true)
returns large_conversion_jobs
language plpgsql as $$
declare
  v_job large_conversion_jobs;
  v_flyer uuid;
begin
  select * into v_job from large_conversion_jobs where id = p_job_id for update;
  if not found then
    raise exception 'conversion job % not found', p_job_id using errcode = 'FD001';
  end if;
  if v_job.status = 'assembling' then
    raise exception 'conversion job % is assembling', p_job_id using errcode = 'FD002';
  end if;
  if v_job.status not in ('pending', 'processing', 'paused_budget', 'waiting_batch') then
    raise exception 'conversion job % is %', p_job_id, v_job.status using errcode = 'FD003';
  end if;

  update large_conversion_jobs
     set status = 'cancelled', updated_at = now(), finished_at = now()
   where id = p_job_id
  returning * into v_job;
  update chunk_jobs set status = 'cancelled', run_id = null
   where job_id = p_job_id and status not in ('completed', 'cancelled');

  if v_job.hold_id is not null and exists (select 1 from credit_holds where id = v_job.hold_id and status = 'held') then
    perform release_credit_hold(v_job.hold_id, 'cancelled');
  end if;

  if p_reset_file then
    update files set status = 'uploaded', phase = null, error_code = null, error_message = null, updated_at = now()
     where id = v_job.file_id;
  end if;

  if v_job.options ? '_compedFlyerJobId' then
    begin
      v_flyer := (v_job.options ->> '_compedFlyerJobId')::uuid;
    exception when invalid_text_representation then
      v_flyer := null;
    end;
    if v_flyer is not null then
      update flyer_jobs set comp_conversion_id = null, updated_at = now()
       where id = v_flyer and comp_conversion_id = p_job_id;
    end if;
  end if;

  perform pg_notify('folio_conversion', json_build_object('fileId', v_job.file_id, 'jobId', v_job.id, 'event', 'cancelled')::text);
  return v_job;
end $$;

-- Flyer cancel: failed with a cancellation message, charge refunded, claim dropped.
create function cancel_flyer_job(p_flyer_id uuid) returns flyer_jobs
language plpgsql as $$
declare
  v_flyer flyer_jobs;
begin
  select * into v_flyer from flyer_jobs where id = p_flyer_id for update;
  if not found then
    raise exception 'flyer job % not found', p_flyer_id using errcode = 'FD001';
  end if;
  if v_flyer.status not in ('pending', 'processing') then
    raise exception 'flyer job % is %', p_flyer_id, v_flyer.status using errcode = 'FD003';
  end if;
  if v_flyer.credits_charged > 0 and not v_flyer.refunded then
    update customers c
       set credits_remaining = case when c.plan_type = 'paid' then c.credits_remaining + v_flyer.credits_charged else c.credits_remaining end,
           lifetime_free_pages_used = case when c.plan_type = 'paid' then c.lifetime_free_pages_used
                                           else greatest(0, c.lifetime_free_pages_used - v_flyer.credits_charged) end
     where c.id = v_flyer.customer_id;
  end if;
  update flyer_jobs
     set status = 'failed', error_message = 'Cancelled by user', claim_id = null,
         refunded = refunded or credits_charged > 0, updated_at = now()
   where id = p_flyer_id
  returning * into v_flyer;
  return v_flyer;
end $$;
