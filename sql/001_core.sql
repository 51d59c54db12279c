-- Core tables: customers (billing accounts), tenants, users, files, the
-- convert-by-email job log, credit holds, settings, audit log, event outbox,
-- and the two email tables both email writers build on.

create extension if not exists pgcrypto;

create table customers (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  name text,
  plan_type text not null default 'free' check (plan_type in ('free', 'paid')),
  credits_remaining integer not null default 0 check (credits_remaining >= 0),
  -- credits reserved by open holds; kept beside the balance so a deduction is one guarded UPDATE
  credits_held integer not null default 0 check (credits_held >= 0),
  lifetime_free_pages_used integer not null default 0 check (lifetime_free_pages_used between 0 and 10),
  free_pages_held integer not null default 0 check (free_pages_held >= 0),
  created_at timestamptz not null default now(),
  constraint customers_email_key unique (email),
  constraint customers_email_lowercase check (email = lower(email))
);

create table tenants (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_at timestamptz not null default now()
);

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  auth_subject text,
  name text,
  customer_id uuid not null references customers (id),
  tenant_id uuid references tenants (id),
  is_tenant_admin boolean not null default false,
  is_admin boolean not null default false,
  created_at timestamptz not null default now(),
  constraint users_email_key unique (email),
  constraint users_auth_subject_key unique (auth_subject),
  constraint users_email_lowercase check (email = lower(email)),
  constraint users_tenant_admin_has_tenant check (not is_tenant_admin or tenant_id is not null)
);
create index users_tenant_id_idx on users (tenant_id);

create table files (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users (id) on delete cascade,
  tenant_id uuid references tenants (id),
  original_name text not null,
  content_type text not null,
  size_bytes bigint not null default 0 check (size_bytes >= 0),
  page_count integer check (page_count >= 0),
  storage_key text,
  status text not null default 'uploaded' check (status in ('uploaded', 'processing', 'completed', 'failed')),
  phase text,
  error_code text,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index files_owner_id_idx on files (owner_id, created_at desc);

-- Convert-by-email job log (specification: conversion_jobs).
create table conversion_jobs (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid references customers (id),
  sender_email text not null,
  filename text,
  file_type text check (file_type in ('pdf', 'docx', 'html')),
  file_size_bytes integer,
  total_pages integer,
  standard_pages integer,
  complex_pages integer,
  credits_charged integer not null default 0,
  status text not null check (status in ('success', 'error')),
  error_message text,
  created_at timestamptz not null default now()
);
create index conversion_jobs_customer_idx on conversion_jobs (customer_id, created_at desc);

create table credit_holds (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid not null references customers (id),
  -- which balance the hold reserves, fixed when the hold is taken
  pool text not null check (pool in ('credits', 'free_pages')),
  amount integer not null check (amount > 0),
  status text not null default 'held' check (status in ('held', 'settled', 'released', 'expired')),
  outcome text check (outcome in ('settled', 'cancelled', 'failed', 'expired')),
  charged integer,
  reference text,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  resolved_at timestamptz
);
create index credit_holds_open_idx on credit_holds (customer_id, expires_at) where status = 'held';
create index credit_holds_expiry_idx on credit_holds (expires_at) where status = 'held';

-- Key/value settings; the email provider pair lives here (the specification's shared parameter store).
create table settings (
  key text primary key,
  value jsonb not null,
  updated_at timestamptz not null default now()
);

create table admin_audit_log (
  id bigserial primary key,
  actor_id uuid references users (id) on delete set null,
  action text not null,
  subject text,
  details jsonb not null default '{}',
  created_at timestamptz not null default now()
);

-- Domain events written in the same transaction as the state change that caused
-- them; the webhook dispatcher drains it (at-least-once, keyed by id).
create table outbox_events (
  id bigserial primary key,
  type text not null,
  aggregate_id uuid,
  payload jsonb not null,
  created_at timestamptz not null default now(),
  dispatched_at timestamptz
);
create index outbox_events_pending_idx on outbox_events (id) where dispatched_at is null;

-- The unified send log. Two writers upsert into it (record_email_send from the
-- library, record_email_event from delivery events) in either order.
create table email_log (
  id uuid primary key default gen_random_uuid(),
  status text not null check (status in ('deferred', 'sent', 'delivery_delayed', 'delivered', 'opened', 'clicked', 'suppressed', 'failed', 'bounced', 'complained')),
  category text not null default 'unknown' check (category in ('auth', 'transactional', 'notification', 'alert', 'marketing', 'unknown')),
  source text,
  provider text check (provider in ('provider_a', 'provider_b')),
  provider_message_id text,
  failed_over boolean not null default false,
  error_kind text check (error_kind in ('rejected', 'unavailable', 'ambiguous')),
  idempotency_key text,
  attempt integer not null default 1,
  to_addresses text[] not null default '{}',
  cc_addresses text[] not null default '{}',
  bcc_addresses text[] not null default '{}',
  from_address text,
  subject text,
  tags jsonb,
  configuration_set text,
  last_event text,
  last_event_at timestamptz,
  alerted_at timestamptz,
  error text,
  raw jsonb,
  cost_usd numeric(12, 6),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint email_log_provider_message_key unique (provider, provider_message_id)
);
create index email_log_created_at_idx on email_log (created_at desc);
create index email_log_idempotency_idx on email_log (idempotency_key);
create index email_log_to_idx on email_log using gin (to_addresses);
alter table email_log enable row level security;

create table email_suppressions (
  email text primary key check (email = lower(email)),
  reason text not null check (reason in ('hard_bounce', 'complaint', 'manual')),
  source text,
  details jsonb,
  created_at timestamptz not null default now()
);
alter table email_suppressions enable row level security;
