-- Customer webhooks (specification: webhook_endpoints, webhook_deliveries,
-- "Delivery to a customer endpoint", "Delivery semantics").
--
-- An endpoint belongs to its creator (tenant_id null: it hears the creator's
-- conversions) or to a tenant (it hears every conversion of the tenant's users
-- and is managed by the tenant's admins). Secrets are stored only as AES-GCM
-- ciphertext under WEBHOOK_SECRET_KEY; during a rotation the previous secret
-- stays valid until rotating_until and every delivery is signed with both.

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users (id) on delete cascade,
  tenant_id uuid references tenants (id) on delete cascade,
  url text not null check (length(url) between 9 and 2048),
  events text[] not null
    check (cardinality(events) between 1 and 2 and events <@ array['conversion.completed', 'conversion.failed']::text[]),
  description text check (length(description) <= 500),
  enabled boolean not null default true,
  secret_ciphertext text not null,
  previous_secret_ciphertext text,
  rotating_until timestamptz,
  -- deliveries that exhausted their retries since the last success; 10 disable the endpoint
  consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
  disabled_reason text check (disabled_reason in ('manual', 'consecutive_failures', 'gone')),
  disabled_at timestamptz,
  -- the claim of the owner's "disabled" email for this disable (released when the send fails)
  disabled_notified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint webhook_endpoints_disabled_reason check (enabled = (disabled_reason is null)),
  constraint webhook_endpoints_rotation check ((previous_secret_ciphertext is null) = (rotating_until is null))
);
create index webhook_endpoints_owner_idx on webhook_endpoints (owner_id) where tenant_id is null;
create index webhook_endpoints_tenant_idx on webhook_endpoints (tenant_id) where tenant_id is not null;

-- One row per (event, endpoint): the unique key is what makes two dispatchers
-- unable to deliver an event twice to one endpoint. Pings have no event row.
--   pending   queued for its next attempt (a pg-boss job exists)
--   overflow  over a rate limit, waiting for the minute drain (at most 100 per endpoint)
--   delivered a 2xx within the timeout
--   failed    retries exhausted, 410, or the endpoint was disabled first
--   dropped   the overflow queue was full; the owner is emailed the links (drop_notified_at)
create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  event_id bigint references outbox_events (id) on delete set null,
  event text not null check (event in ('conversion.completed', 'conversion.failed', 'ping')),
  -- whose conversion it tells of, and their tenant: the keys its rate limits count against
  file_id uuid,
  user_id uuid,
  tenant_id uuid,
  -- the exact bytes every attempt sends (jsonb would reorder keys between attempts)
  body text not null,
  status text not null check (status in ('pending', 'overflow', 'delivered', 'failed', 'dropped')),
  attempts integer not null default 0 check (attempts between 0 and 3),
  next_attempt_at timestamptz,
  last_http_status integer,
  last_response_body text,
  last_latency_ms integer,
  last_error text,
  -- the claim of the owner's email listing this drop (released when the send fails)
  drop_notified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz,
  constraint webhook_deliveries_event_endpoint_key unique (event_id, endpoint_id)
);
create index webhook_deliveries_history_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
-- overflow drains oldest first: by dispatch time, then event order (one dispatch stamps many rows alike)
create index webhook_deliveries_overflow_idx on webhook_deliveries (endpoint_id, created_at, event_id, id) where status = 'overflow';
create index webhook_deliveries_unnotified_drops_idx on webhook_deliveries (endpoint_id) where status = 'dropped' and drop_notified_at is null;

-- One row per try (svix-style): what the receiver answered, how fast, or why it could not be reached.
create table webhook_delivery_attempts (
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null check (attempt between 1 and 3),
  started_at timestamptz not null,
  http_status integer,
  -- at most 1 KB of what the receiver said, shown only to the endpoint's owner
  response_body text check (octet_length(response_body) <= 1024),
  latency_ms integer,
  error text,
  primary key (delivery_id, attempt)
);

alter table webhook_endpoints enable row level security;
alter table webhook_deliveries enable row level security;
alter table webhook_delivery_attempts enable row level security;

-- Wakes the outbox dispatchers (LISTEN folio_outbox) when a conversion commits
-- an event, so delivery does not wait for a poll. Per statement, and NOTIFY
-- folds duplicates within a transaction: one wake-up per commit.
create function notify_outbox_dispatchers() returns trigger
language plpgsql as $$
begin
  perform pg_notify('folio_outbox', '');
  return null;
end $$;

create trigger outbox_events_notify_dispatchers
  after insert on outbox_events
  for each statement execute function notify_outbox_dispatchers();
