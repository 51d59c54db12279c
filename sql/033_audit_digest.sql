-- Who receives the admin audit digest, and how often. Nothing writes it yet
-- (the specification says so): runs send nothing until rows exist.
create table audit_digest_subscriptions (
  id uuid primary key default gen_random_uuid(),
  email text not null check (email = lower(email)),
  cadence text not null check (cadence in ('daily', 'weekly')),
  created_at timestamptz not null default now(),
  constraint audit_digest_subscriptions_email_cadence_key unique (email, cadence)
);
