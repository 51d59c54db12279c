-- The send-log functions of the email library. Two writers share email_log
-- and may arrive in either order: record_email_send (the library, here) and
-- record_email_event (delivery events). Both fold the status through the same
-- rank, so the order of arrival never decides the outcome.

-- deferred < sent < delivery_delayed < delivered < opened < clicked; the four
-- terminal statuses outrank every moving one; anything else is NULL.
create function email_status_rank(p_status text) returns integer
language sql immutable parallel safe as $$
  select case p_status
    when 'deferred' then 1
    when 'sent' then 2
    when 'delivery_delayed' then 3
    when 'delivered' then 4
    when 'opened' then 5
    when 'clicked' then 6
    when 'suppressed' then 100
    when 'failed' then 100
    when 'bounced' then 100
    when 'complained' then 100
  end
$$;

create function email_status_is_terminal(p_status text) returns boolean
language sql immutable parallel safe as $$
  select coalesce(p_status in ('suppressed', 'failed', 'bounced', 'complained'), false)
$$;

-- The status a row keeps when a second writer reports p_incoming: a terminal
-- status already there stays; a terminal incoming one wins; otherwise the higher rank.
create function email_status_merge(p_current text, p_incoming text) returns text
language sql immutable parallel safe as $$
  select case
    when p_current is null then p_incoming
    when p_incoming is null then p_current
    when email_status_is_terminal(p_current) then p_current
    when email_status_is_terminal(p_incoming) then p_incoming
    when coalesce(email_status_rank(p_incoming), 0) > coalesce(email_status_rank(p_current), 0) then p_incoming
    else p_current
  end
$$;

-- Recipients are stored bare and lowercase, whatever the caller passed.
create function email_address_array(p_value jsonb) returns text[]
language sql immutable parallel safe as $$
  select coalesce(array_agg(lower(btrim(v))), '{}')
    from jsonb_array_elements_text(case when jsonb_typeof(p_value) = 'array' then p_value else '[]'::jsonb end) as v
   where btrim(v) <> ''
$$;

-- Inserts the entries that nobody wrote yet and returns their ids. An entry
-- that conflicts on either key (its id, or a provider message an event already
-- recorded) is skipped here and merged by email_log_merge_send.
create function email_log_insert_entries(p_entries jsonb) returns setof uuid
language sql as $$
  insert into email_log (
    id, status, category, source, provider, provider_message_id, failed_over, error_kind,
    idempotency_key, attempt, to_addresses, cc_addresses, bcc_addresses, from_address, subject,
    tags, configuration_set, error, cost_usd
  )
  select (e->>'id')::uuid, e->>'status', coalesce(nullif(e->>'category', ''), 'unknown'), e->>'source',
         nullif(e->>'provider', ''), nullif(e->>'provider_message_id', ''),
         coalesce((e->>'failed_over')::boolean, false), e->>'error_kind', e->>'idempotency_key',
         coalesce((e->>'attempt')::integer, 1), email_address_array(e->'to'), email_address_array(e->'cc'),
         email_address_array(e->'bcc'), e->>'from', e->>'subject',
         case when jsonb_typeof(e->'tags') = 'object' then e->'tags' end, e->>'configuration_set',
         e->>'error', (e->>'cost_usd')::numeric
    from jsonb_array_elements(p_entries) as e
  on conflict do nothing
  returning id
$$;

-- The other writer got there first: fill the send-side fields into its row.
--
-- The row is the one for the same (provider, provider_message_id) — written by
-- a delivery event that beat us — or else the one with the same id (a rerun of
-- the same attempt, or an event that adopted our id from the folio_log_id
-- tag). The status keeps the higher rank (a terminal status always wins, so a
-- library 'sent' never overwrites an event's 'delivered' or 'bounced').
-- last_event, last_event_at, raw, alerted_at and an error an event already set
-- are never touched.
create function email_log_merge_send(p_entry jsonb) returns uuid
language plpgsql as $$
declare
  v_id uuid := (p_entry->>'id')::uuid;
  v_status text := p_entry->>'status';
  v_provider text := nullif(p_entry->>'provider', '');
  v_message_id text := nullif(p_entry->>'provider_message_id', '');
  v_to text[] := email_address_array(p_entry->'to');
  v_cc text[] := email_address_array(p_entry->'cc');
  v_bcc text[] := email_address_array(p_entry->'bcc');
  v_tags jsonb := case when jsonb_typeof(p_entry->'tags') = 'object' then p_entry->'tags' end;
  v_existing uuid;
begin
  loop
    v_existing := null;
    if v_provider is not null and v_message_id is not null then
      select id into v_existing from email_log
       where provider = v_provider and provider_message_id = v_message_id
       for update;
    end if;
    if v_existing is null then
      select id into v_existing from email_log where id = v_id for update;
    end if;
    if v_existing is not null then
      update email_log set
        status = email_status_merge(status, v_status),
        category = coalesce(nullif(p_entry->>'category', ''), category),
        source = coalesce(p_entry->>'source', source),
        provider = coalesce(provider, v_provider),
        provider_message_id = coalesce(provider_message_id, v_message_id),
        failed_over = coalesce((p_entry->>'failed_over')::boolean, failed_over),
        error_kind = coalesce(p_entry->>'error_kind', error_kind),
        idempotency_key = coalesce(p_entry->>'idempotency_key', idempotency_key),
        attempt = coalesce((p_entry->>'attempt')::integer, attempt),
        to_addresses = case when cardinality(v_to) > 0 then v_to else to_addresses end,
        cc_addresses = case when cardinality(v_cc) > 0 then v_cc else cc_addresses end,
        bcc_addresses = case when cardinality(v_bcc) > 0 then v_bcc else bcc_addresses end,
        from_address = coalesce(p_entry->>'from', from_address),
        subject = coalesce(p_entry->>'subject', subject),
        tags = coalesce(tags, '{}'::jsonb) || coalesce(v_tags, '{}'::jsonb),
        configuration_set = coalesce(p_entry->>'configuration_set', configuration_set),
        error = coalesce(error, p_entry->>'error'),
        cost_usd = coalesce((p_entry->>'cost_usd')::numeric, cost_usd),
        updated_at = now()
      where id = v_existing;
      return v_existing;
    end if;
    -- The conflicting row was deleted before we could lock it: insert again.
    select email_log_insert_entries into v_existing from email_log_insert_entries(jsonb_build_array(p_entry));
    if v_existing is not null then
      return v_existing;
    end if;
  end loop;
end $$;

-- Several library sends at once (the library batches concurrent sends into
-- one round trip); ids come back with each entry's 1-based position. Entries
-- without an id get one. Keys of an entry: id, status, category, source,
-- provider, provider_message_id, failed_over, error_kind, idempotency_key,
-- attempt, to, cc, bcc, from, subject, tags, configuration_set, error, cost_usd.
create function record_email_sends(p_entries jsonb) returns table (n bigint, id uuid)
language plpgsql as $$
declare
  v_entries jsonb;
  v_inserted uuid[];
  v_bad text;
begin
  select e->>'status' into v_bad from jsonb_array_elements(p_entries) as e where email_status_rank(e->>'status') is null limit 1;
  if found then
    raise exception 'record_email_send: unknown status %', v_bad using errcode = '22023';
  end if;
  select coalesce(jsonb_agg(case when coalesce(e.value->>'id', '') = '' then e.value || jsonb_build_object('id', gen_random_uuid()) else e.value end order by e.n), '[]')
    into v_entries
    from jsonb_array_elements(p_entries) with ordinality as e(value, n);
  v_inserted := array(select email_log_insert_entries(v_entries));
  return query
    select e.n, case when (e.value->>'id')::uuid = any(v_inserted) then (e.value->>'id')::uuid else email_log_merge_send(e.value) end
      from jsonb_array_elements(v_entries) with ordinality as e(value, n)
     order by e.n;
end $$;

-- One library send; returns the id of the row that holds it. See record_email_sends.
create function record_email_send(p_entry jsonb) returns uuid
language sql as $$
  select id from record_email_sends(jsonb_build_array(p_entry))
$$;
