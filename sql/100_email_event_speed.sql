-- Cheaper delivery-event recording (issue 23): the same rows, statuses,
-- claims and suppressions as 030_email_events.sql, for less work per call.

-- The recipients helper as PL/pgSQL: a non-inlinable SQL function is planned
-- again in every transaction that calls it from PL/pgSQL, which cost
-- record_email_event about a third of its time; PL/pgSQL keeps its plan for
-- the session. Same answer: bare, lowercase, blanks dropped, '{}' for a non-array.
create or replace function email_address_array(p_value jsonb) returns text[]
language plpgsql immutable parallel safe as $$
begin
  if jsonb_typeof(p_value) is distinct from 'array' then
    return '{}';
  end if;
  return array(select lower(btrim(v)) from jsonb_array_elements_text(p_value) as v where btrim(v) <> '');
end $$;

-- record_email_event as in 030_email_events.sql (see there for the rules),
-- with the insert tried before the lookup, and only the three columns it reads
-- carried back instead of the whole row.
create or replace function record_email_event(
  p_provider text,
  p_provider_message_id text,
  p_event text,
  p_occurred_at timestamptz default null,
  p_raw jsonb default null,
  p_last_event text default null,
  p_error text default null,
  p_to jsonb default null,
  p_from text default null,
  p_subject text default null,
  p_configuration_set text default null,
  p_tags jsonb default null,
  p_log_id uuid default null,
  p_suppress jsonb default null,
  p_suppress_reason text default null,
  p_alert boolean default true,
  p_backfill boolean default false
) returns table (send_id uuid, status text, alert boolean)
language plpgsql as $$
#variable_conflict use_column
declare
  v_at timestamptz := coalesce(p_occurred_at, now());
  v_to text[] := email_address_array(p_to);
  v_tags jsonb := case when jsonb_typeof(p_tags) = 'object' then p_tags end;
  v_new_status text := case when p_event = 'bounce_transient' then null else p_event end;
  v_failure boolean := email_event_is_failure(p_event);
  v_row record;
  v_created boolean := false;
  v_alert boolean := false;
  v_claim boolean;
  v_insert_id uuid := p_log_id;
begin
  if not email_event_is_known(p_event) then
    raise exception 'record_email_event: unknown event %', p_event using errcode = '22023';
  end if;
  if p_provider is null or p_provider not in ('provider_a', 'provider_b') then
    raise exception 'record_email_event: unknown provider %', p_provider using errcode = '22023';
  end if;
  if coalesce(p_provider_message_id, '') = '' then
    raise exception 'record_email_event: provider message id required' using errcode = '22023';
  end if;
  if p_suppress_reason is not null and p_suppress_reason not in ('hard_bounce', 'complaint', 'manual') then
    raise exception 'record_email_event: unknown suppression reason %', p_suppress_reason using errcode = '22023';
  end if;

  -- Most events are for a message no row knows yet: try the insert first. It
  -- inserts nothing when a row holds either key (this message, or the tagged
  -- id), and the loop below then finds and locks that row as before.
  insert into email_log (id, status, category, provider, provider_message_id, to_addresses, from_address,
                         subject, tags, configuration_set, last_event, last_event_at, raw, error)
  values (coalesce(p_log_id, gen_random_uuid()), coalesce(v_new_status, 'sent'), 'unknown', p_provider,
          p_provider_message_id, v_to, p_from, p_subject, v_tags, p_configuration_set,
          coalesce(p_last_event, p_event), v_at, p_raw, case when v_failure then p_error end)
  on conflict do nothing
  returning id, status, alerted_at into v_row;
  v_created := found;

  while not v_created loop
    select l.id, l.status, l.alerted_at into v_row from email_log l
     where l.provider = p_provider and l.provider_message_id = p_provider_message_id
     for update;
    if not found and p_log_id is not null then
      select l.id, l.status, l.alerted_at into v_row from email_log l
       where l.id = p_log_id and (l.provider is null or l.provider = p_provider)
         and (l.provider_message_id is null or l.provider_message_id = p_provider_message_id)
       for update;
    end if;
    exit when found;
    insert into email_log (id, status, category, provider, provider_message_id, to_addresses, from_address,
                           subject, tags, configuration_set, last_event, last_event_at, raw, error)
    values (coalesce(v_insert_id, gen_random_uuid()), coalesce(v_new_status, 'sent'), 'unknown', p_provider,
            p_provider_message_id, v_to, p_from, p_subject, v_tags, p_configuration_set,
            coalesce(p_last_event, p_event), v_at, p_raw, case when v_failure then p_error end)
    on conflict do nothing
    returning id, status, alerted_at into v_row;
    if found then
      v_created := true;
      exit;
    end if;
    -- Another writer inserted the same message between our select and insert
    -- (go round and lock its row), or the tagged id belongs to a row we may
    -- not adopt (another provider or message): insert under a fresh id.
    v_insert_id := null;
  end loop;

  if not v_created then
    update email_log l set
      status = coalesce(email_status_merge(l.status, v_new_status), l.status),
      provider = coalesce(l.provider, p_provider),
      provider_message_id = coalesce(l.provider_message_id, p_provider_message_id),
      to_addresses = case when cardinality(l.to_addresses) = 0 then v_to else l.to_addresses end,
      from_address = coalesce(l.from_address, p_from),
      subject = coalesce(l.subject, p_subject),
      tags = case when v_tags is null then l.tags else v_tags || coalesce(l.tags, '{}'::jsonb) end,
      configuration_set = coalesce(l.configuration_set, p_configuration_set),
      last_event = case when l.last_event_at is null or v_at >= l.last_event_at then coalesce(p_last_event, p_event) else l.last_event end,
      raw = case when l.last_event_at is null or v_at >= l.last_event_at then coalesce(p_raw, l.raw) else l.raw end,
      last_event_at = greatest(l.last_event_at, v_at),
      error = case when v_failure then coalesce(l.error, p_error) else l.error end,
      updated_at = now()
    where l.id = v_row.id
    returning l.id, l.status, l.alerted_at into v_row;
  end if;

  v_claim := v_failure and v_row.alerted_at is null and email_event_is_terminal_failure(v_row.status);
  if v_claim and p_backfill and v_created then
    update email_log l set alerted_at = now() where l.id = v_row.id;
  elsif v_claim and p_alert then
    update email_log l set alerted_at = now() where l.id = v_row.id;
    v_alert := true;
  end if;

  if p_suppress_reason is not null and jsonb_typeof(p_suppress) = 'array' then
    insert into email_suppressions (email, reason, source, details)
    select a, p_suppress_reason, p_provider,
           jsonb_build_object('event', p_event, 'provider_message_id', p_provider_message_id, 'send_id', v_row.id)
      from unnest(email_address_array(p_suppress)) as a
    on conflict (email) do nothing;
  end if;

  send_id := v_row.id;
  status := v_row.status;
  alert := v_alert;
  return next;
end $$;
