-- Shares of a converted file and team invites.
--
-- A share mails one link to its recipients; the link names the share row,
-- which pins the HTML that was shared (copied out of the result zip once), so
-- a later reconversion never changes what a recipient opens.
create table file_shares (
  id uuid primary key default gen_random_uuid(),
  file_id uuid not null references files (id) on delete cascade,
  shared_by uuid not null references users (id) on delete cascade,
  html_key text not null,
  message text check (length(message) <= 2000),
  recipients_sent integer not null default 0 check (recipients_sent >= 0),
  recipients_unsent integer not null default 0 check (recipients_unsent >= 0),
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index file_shares_file_idx on file_shares (file_id);

-- A tenant admin invites an address; accepting the signed link joins the tenant.
create table team_invites (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  email text not null check (email = lower(email)),
  invited_by uuid references users (id) on delete set null,
  status text not null default 'pending' check (status in ('pending', 'accepted', 'revoked')),
  -- the library's answer for the latest invite email
  last_send_status text check (last_send_status in ('sent', 'deferred', 'suppressed', 'failed')),
  expires_at timestamptz not null,
  accepted_by uuid references users (id) on delete set null,
  accepted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Inviting an address again while its invite is open renews that invite instead of adding one.
create unique index team_invites_open_idx on team_invites (tenant_id, email) where status = 'pending';
