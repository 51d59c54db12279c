-- Conversion result mail (users.conversion_result_email, 062): one row per
-- outbox event mailed, claimed before the send, so a job received twice
-- mails once. No foreign key to outbox_events: the outbox may be pruned.
create table conversion_result_mails (
  event_id bigint primary key,
  file_id uuid not null,
  user_id uuid not null references users (id) on delete cascade,
  status text not null default 'sending' check (status in ('sending', 'sent', 'deferred', 'suppressed', 'failed', 'skipped')),
  log_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
