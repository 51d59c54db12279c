-- Contact-form messages, kept whether or not the notification to the team
-- address went out, so a failed send loses nothing.
create table contact_messages (
  id uuid primary key default gen_random_uuid(),
  email text not null check (email = lower(email)),
  name text not null check (length(name) <= 200),
  message text not null check (length(message) <= 5000),
  remote_address text,
  send_status text check (send_status in ('sent', 'deferred', 'suppressed', 'failed')),
  created_at timestamptz not null default now()
);
create index contact_messages_created_idx on contact_messages (created_at desc);
