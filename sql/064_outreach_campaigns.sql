-- Outreach campaigns sent over provider B in the outreach configuration set.
-- One delivery row per (campaign, address) is claimed before its send, so a
-- batch job received twice never mails anyone twice.
create table outreach_campaigns (
  id uuid primary key default gen_random_uuid(),
  name text not null check (name ~ '^[A-Za-z0-9_-]{1,64}$'),
  subject text not null,
  html text,
  text text,
  created_by uuid references users (id) on delete set null,
  recipients integer not null default 0,
  created_at timestamptz not null default now(),
  constraint outreach_campaigns_content check (html is not null or text is not null)
);

create table outreach_deliveries (
  campaign_id uuid not null references outreach_campaigns (id) on delete cascade,
  email text not null check (email = lower(email)),
  status text not null default 'queued'
    check (status in ('queued', 'sending', 'sent', 'deferred', 'suppressed', 'failed', 'skipped')),
  provider_message_id text,
  error text,
  updated_at timestamptz not null default now(),
  primary key (campaign_id, email)
);
