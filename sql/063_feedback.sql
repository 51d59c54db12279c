-- Feedback on a converted file: a rating tied to the file, the job whose
-- report it judges, and that report's verdict at the time.
create table conversion_feedback (
  id uuid primary key default gen_random_uuid(),
  file_id uuid not null references files (id) on delete cascade,
  job_id uuid references large_conversion_jobs (id) on delete set null,
  user_id uuid not null references users (id) on delete cascade,
  rating integer not null check (rating between 1 and 5),
  comment text check (length(comment) <= 5000),
  wcag_status text,
  send_status text check (send_status in ('sent', 'deferred', 'suppressed', 'failed')),
  created_at timestamptz not null default now()
);
create index conversion_feedback_file_idx on conversion_feedback (file_id);
