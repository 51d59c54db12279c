-- Input from storage integrations (issue 19): customer S3 connections, the
-- objects imported from them, watched prefixes. URL imports need no table of
-- their own: the file row carries the import's phase and its failure.
--
-- Failure codes written to storage_imports.error_code and files.error_code:
--   IMPORT_REFUSED            the URL or an address it resolves to is not public HTTPS
--   IMPORT_UNREACHABLE        DNS, connect, TLS or timeout failure
--   IMPORT_TOO_MANY_REDIRECTS more than 3 redirects
--   IMPORT_ORIGIN_ERROR       the origin (or the bucket) answered 4xx/5xx
--   IMPORT_TOO_LARGE          more bytes than UPLOAD_MAX_BYTES (cut while streaming)
--   IMPORT_NOT_A_PDF          the body does not start with %PDF-
--   PDF_*                     the engine could not open the PDF (encrypted, damaged, too many pages)
--   OUTPUT_WRITE_FAILED       the results could not be written back to the bucket

create table storage_connections (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  bucket text not null check (bucket ~ '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$'),
  prefix text not null default '' check (length(prefix) <= 1024),
  region text not null check (region ~ '^[a-z]{2}(-[a-z0-9]+)+-[0-9]$'),
  endpoint text,
  -- Exactly one way in: a role we assume (with the owner's external id), or access keys.
  role_arn text,
  access_key_id text,
  -- AES-256-GCM under a key derived from WEBHOOK_SECRET_KEY, bound to this row's id (server/storage/connection-secrets.ts).
  secret_access_key_enc text,
  constraint storage_connections_one_credential check ((role_arn is null) <> (access_key_id is null)),
  constraint storage_connections_key_pair check ((access_key_id is null) = (secret_access_key_enc is null)),
  output_prefix text not null check (length(output_prefix) between 1 and 1024),
  default_options jsonb not null default '{}',
  watched boolean not null default false,
  watch_interval_minutes integer not null default 5 check (watch_interval_minutes between 1 and 1440),
  -- paused_credits: the last start was refused for credits; the watch lists nothing until the balance covers a page again.
  watch_state text not null default 'active' check (watch_state in ('active', 'paused_credits')),
  -- Set when the owner was told of the pause; cleared on resume, so each pause mails once.
  paused_notified_at timestamptz,
  last_listed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index storage_connections_owner_idx on storage_connections (owner_id, created_at);
create index storage_connections_watched_idx on storage_connections (last_listed_at) where watched;

create table storage_imports (
  id uuid primary key default gen_random_uuid(),
  connection_id uuid not null references storage_connections (id) on delete cascade,
  object_key text not null,
  etag text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  source text not null check (source in ('import', 'watch')),
  status text not null default 'queued'
    check (status in ('queued', 'waiting_credits', 'converting', 'writing_output', 'completed', 'failed')),
  file_id uuid references files (id) on delete set null,
  error_code text,
  error_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The same object (same key, same content) is never imported twice; a changed object has a new ETag.
  constraint storage_imports_once unique (connection_id, object_key, etag)
);
create index storage_imports_live_idx on storage_imports (status, updated_at) where status in ('queued', 'waiting_credits', 'converting', 'writing_output');
