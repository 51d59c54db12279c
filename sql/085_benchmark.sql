-- Pipeline benchmark sessions (specification: "Cloud benchmark API", "Cloud
-- queue message (benchmark)"). A session runs one file through 1..6
-- pipelines; each pipeline is one queue job, and its result is one value in
-- the key-value table below.
--
-- Invariant: a session is `complete` exactly when every pipeline's value is
-- terminal (`complete` or `failed`). Whoever writes a terminal value locks the
-- session row first, so of two pipelines finishing together exactly one sees
-- the last terminal value and marks the session (and settles its credits).
create table benchmark_sessions (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users (id) on delete cascade,
  customer_id uuid not null references customers (id),
  file_id uuid not null references files (id) on delete cascade,
  pipeline_count integer not null check (pipeline_count between 1 and 6),
  pages integer not null check (pages >= 1),
  status text not null default 'running' check (status in ('running', 'complete')),
  -- credits held for pages x pipelines at the start, settled for the pipelines that completed
  hold_id uuid,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  check ((status = 'complete') = (completed_at is not null))
);
create index benchmark_sessions_owner_idx on benchmark_sessions (owner_id, created_at desc);

-- The specification's key-value store: key (session, pipeline), value the
-- pipeline's JSON result. `value->>'status'` is queued, running, complete or failed.
create table benchmark_results (
  session_id uuid not null references benchmark_sessions (id) on delete cascade,
  pipeline integer not null check (pipeline >= 0 and pipeline < 6),
  value jsonb not null check (value->>'status' in ('queued', 'running', 'complete', 'failed')),
  updated_at timestamptz not null default now(),
  primary key (session_id, pipeline)
);
-- The queue depth the autoscaling rule follows: pipelines waiting for a worker.
create index benchmark_results_queued_idx on benchmark_results (session_id) where value->>'status' = 'queued';
