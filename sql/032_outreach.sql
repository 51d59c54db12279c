-- Outreach bookkeeping for campaign mail sent over provider B in the outreach
-- configuration set (CLOUD_CONFIGURATION_SET). Delivery events keep it current.
create table prospects (
  email text primary key check (email = lower(email)),
  status text not null default 'active' check (status in ('active', 'bounced', 'complained', 'unsubscribed')),
  last_contacted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table email_sends (
  provider_message_id text primary key,
  prospect_email text references prospects (email) on delete cascade,
  campaign text,
  status text not null default 'sent',
  sent_at timestamptz,
  delivered_at timestamptz,
  opened_at timestamptz,
  clicked_at timestamptz,
  bounced_at timestamptz,
  complained_at timestamptz,
  updated_at timestamptz not null default now()
);
create index email_sends_prospect_idx on email_sends (prospect_email);

create table unsubscribes (
  email text primary key check (email = lower(email)),
  reason text not null,
  source text,
  created_at timestamptz not null default now()
);
