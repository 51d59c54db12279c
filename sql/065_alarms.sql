-- Monitoring alarms evaluated every minute. One episode per condition from
-- the minute it starts firing to the minute it stops; its alert is claimed
-- like a delivery-failure alert (alerted_at set atomically, released when the
-- alert did not go out), so an episode alerts once.
create table alarm_episodes (
  id bigserial primary key,
  condition text not null,
  started_at timestamptz not null,
  ended_at timestamptz,
  alerted_at timestamptz,
  -- the value that opened the episode, and the latest one
  first_value numeric not null,
  last_value numeric not null,
  details jsonb not null default '{}'
);
-- At most one open episode per condition.
create unique index alarm_episodes_open_idx on alarm_episodes (condition) where ended_at is null;

-- API 5xx answers per minute, written by every API process, so the alarm
-- sees all of them (the Prometheus counter is per process).
create table api_error_minutes (
  minute timestamptz primary key,
  errors integer not null default 0
);
