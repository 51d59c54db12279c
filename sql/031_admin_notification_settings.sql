-- Admin notification settings: per alert type, mute it or reroute it. No row
-- means the defaults (enabled, email + messenger, email to ALERT_EMAIL).
create table admin_notification_settings (
  alert_type text primary key,
  enabled boolean not null default true,
  channels text[] not null default '{email,messenger}' check (channels <@ array['email', 'messenger']::text[]),
  -- reroutes the email channel away from ALERT_EMAIL
  email_to text check (email_to = lower(email_to)),
  updated_at timestamptz not null default now()
);
