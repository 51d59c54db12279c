-- Sliding-window rate limits shared by every process (one PostgreSQL, many
-- API and worker processes): promo claims per address and IP, contact forms,
-- shares, webhook deliveries per endpoint/user/tenant, intake per sender.
--
-- A sliding log: one row per counted hit. Exact (a window never lets limit+1
-- through, unlike fixed buckets at their edge), and small at our limits (at
-- most `limit` live rows per key).

create table rate_limit_hits (
  key text not null,
  at timestamptz not null
);
create index rate_limit_hits_key_at on rate_limit_hits (key, at);

alter table rate_limit_hits enable row level security;

-- take_rate_limits: counts one hit against every key, or against none.
-- Several keys are taken together (a webhook delivery counts against its
-- endpoint, its user and its tenant at once): when any key is at its limit,
-- nothing is counted, and the answer names that key and when it frees up.
-- Keys are locked in sorted order (transaction-scoped advisory locks), so two
-- callers with overlapping keys never deadlock and never both take the last slot.
create function take_rate_limits(p_keys text[], p_limits int[], p_window_ms bigint[], p_now timestamptz default now())
returns table (allowed boolean, retry_after_ms bigint, blocking_key text)
language plpgsql as $$
declare
  i int;
  v_key text;
  v_window interval;
  v_count int;
  v_oldest timestamptz;
begin
  if coalesce(array_length(p_keys, 1), 0) = 0 then
    return query select true, 0::bigint, null::text;
    return;
  end if;
  if array_length(p_keys, 1) <> array_length(p_limits, 1) or array_length(p_keys, 1) <> array_length(p_window_ms, 1) then
    raise exception 'take_rate_limits: keys, limits and windows differ in length';
  end if;
  for v_key in select distinct k from unnest(p_keys) as k order by k loop
    perform pg_advisory_xact_lock(hashtextextended('rate:' || v_key, 0));
  end loop;
  for i in 1 .. array_length(p_keys, 1) loop
    v_window := make_interval(secs => p_window_ms[i] / 1000.0);
    delete from rate_limit_hits where key = p_keys[i] and at <= p_now - v_window;
    select count(*), min(at) into v_count, v_oldest from rate_limit_hits where key = p_keys[i];
    if v_count >= p_limits[i] then
      -- The window frees a slot when its oldest hit ages out; with more than
      -- `limit` hits (a lowered limit), it is the (count - limit + 1)th oldest.
      select h.at into v_oldest from rate_limit_hits h where h.key = p_keys[i] order by h.at offset (v_count - p_limits[i]) limit 1;
      return query select false, greatest(1, ceil(extract(epoch from (v_oldest + v_window - p_now)) * 1000))::bigint, p_keys[i];
      return;
    end if;
  end loop;
  insert into rate_limit_hits (key, at) select k, p_now from unnest(p_keys) as k;
  return query select true, 0::bigint, null::text;
end;
$$;

-- Keys nobody has hit for a day keep their last rows until this sweep.
create function sweep_rate_limit_hits(p_older_than interval default interval '1 day')
returns int language sql as $$
  with gone as (delete from rate_limit_hits where at < now() - p_older_than returning 1)
  select count(*)::int from gone;
$$;
