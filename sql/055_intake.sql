-- Convert-by-email intake. One row per message the SMTP listener or the
-- inbound-email route accepted: it is written, with the raw message already in
-- the object store and its queue job, before the sender hears "250 OK", so a
-- crash after that loses no mail. The row then records how far the message got.
--
-- Statuses:
--   received    stored and queued; the intake handler has not finished with it
--   converting  the PDF is in a conversion job (file_id); waiting for it to end
--   finishing   the conversion ended; the reply and the job log are being written
--   replied     the conversion succeeded and the result reply went out (or failed to, see reply_error)
--   refused     a branded refusal went out (unregistered, no attachment, type, size, credits)
--   failed      the conversion failed or was cancelled; the error reply went out
--   dropped     no reply on purpose (loop guard, rate limit, unreadable MIME)

create table intake_messages (
  id uuid primary key,
  source text not null check (source in ('smtp', 'http')),
  -- the Message-ID when there is one, else a hash of the bytes: a sender's retry after a lost "250" is one message
  dedupe_key text not null,
  raw_key text,
  size_bytes bigint not null check (size_bytes >= 0),
  envelope_from text,
  envelope_to text[] not null default '{}',
  remote_address text,
  -- read once by the intake handler; the finishing reply threads and names the file from these
  sender_email text,
  subject text,
  thread_message_id text,
  thread_references text[] not null default '{}',
  filename text,
  file_size_bytes integer,
  customer_id uuid references customers (id),
  file_id uuid references files (id) on delete set null,
  status text not null default 'received'
    check (status in ('received', 'converting', 'finishing', 'replied', 'refused', 'failed', 'dropped')),
  -- why it ended as it did: the reply kind, or the reason nothing was sent
  outcome text,
  ack_sent_at timestamptz,
  reply_sent_at timestamptz,
  reply_error text,
  conversion_log_id uuid references conversion_jobs (id),
  cleaned_at timestamptz,
  received_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint intake_messages_dedupe_key unique (dedupe_key)
);
create index intake_messages_converting_idx on intake_messages (file_id) where status in ('converting', 'finishing');
create index intake_messages_received_idx on intake_messages (received_at) where status = 'received';

-- Intake replies go out through the mail-provider API, not provider A or B,
-- and are written to the same send log under their own provider name.
alter table email_log drop constraint email_log_provider_check;
alter table email_log add constraint email_log_provider_check check (provider in ('provider_a', 'provider_b', 'mail_api'));
