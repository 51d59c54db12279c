-- Promotions whose landing page asks for an email address and mails a
-- magic sign-in link (POST /api/promo/:promoSlug/claim). One claim row per
-- promo and address; claiming again mails a fresh link and bumps the row.
create table promos (
  slug text primary key check (slug ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
  title text not null,
  active boolean not null default true,
  expires_at timestamptz,
  created_at timestamptz not null default now()
);

create table promo_claims (
  promo_slug text not null references promos (slug) on delete cascade,
  email text not null check (email = lower(email)),
  claims integer not null default 1,
  -- the library's result for the latest link: the claim stands even when the email did not go out
  last_send_status text not null check (last_send_status in ('sent', 'deferred', 'suppressed', 'failed')),
  last_send_log_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (promo_slug, email)
);
