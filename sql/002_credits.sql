-- Credit functions. Each balance change is a single guarded UPDATE, so
-- concurrent callers serialise on the customer row and the CHECK constraints
-- are a second line of defence. Errors carry our own SQLSTATEs (class FC) so
-- the TypeScript side maps them by code, never by message text:
--   FC001 insufficient credits, FC002 free page limit, FC003 no such customer,
--   FC004 no such hold, FC005 hold already resolved.

create function folio_raise_missing_customer(p_customer_id uuid) returns void
language plpgsql as $$
begin
  raise exception 'customer % not found', p_customer_id using errcode = 'FC003';
end $$;

-- Frees the credits of this customer's holds whose window has passed. Called
-- on the slow path of every balance check, and by the periodic sweep.
create function expire_credit_holds(p_customer_id uuid default null) returns integer
language plpgsql as $$
declare
  v_count integer := 0;
  v_hold record;
begin
  for v_hold in
    update credit_holds
       set status = 'expired', outcome = 'expired', resolved_at = now()
     where status = 'held' and expires_at <= now()
       and (p_customer_id is null or customer_id = p_customer_id)
    returning customer_id, pool, amount
  loop
    if v_hold.pool = 'credits' then
      update customers set credits_held = credits_held - v_hold.amount where id = v_hold.customer_id;
    else
      update customers set free_pages_held = free_pages_held - v_hold.amount where id = v_hold.customer_id;
    end if;
    v_count := v_count + 1;
  end loop;
  return v_count;
end $$;

-- Paid balance. Raises FC001 when credits (less open holds) are insufficient.
create function deduct_credits(p_customer_id uuid, p_amount integer) returns integer
language plpgsql as $$
declare
  v_remaining integer;
begin
  if p_amount is null or p_amount < 0 then
    raise exception 'amount must be a non-negative integer' using errcode = '22023';
  end if;
  update customers set credits_remaining = credits_remaining - p_amount
   where id = p_customer_id and credits_remaining - credits_held >= p_amount
  returning credits_remaining into v_remaining;
  if found then return v_remaining; end if;
  -- Slow path: an expired hold may still be counted; free it and try once more.
  perform expire_credit_holds(p_customer_id);
  update customers set credits_remaining = credits_remaining - p_amount
   where id = p_customer_id and credits_remaining - credits_held >= p_amount
  returning credits_remaining into v_remaining;
  if found then return v_remaining; end if;
  if not exists (select 1 from customers where id = p_customer_id) then
    perform folio_raise_missing_customer(p_customer_id);
  end if;
  raise exception 'insufficient credits for customer %: % needed', p_customer_id, p_amount using errcode = 'FC001';
end $$;

-- Free tier. Raises FC002 when the 10 lifetime pages would be exceeded.
create function use_free_pages(p_customer_id uuid, p_pages integer) returns integer
language plpgsql as $$
declare
  v_used integer;
begin
  if p_pages is null or p_pages < 0 then
    raise exception 'pages must be a non-negative integer' using errcode = '22023';
  end if;
  update customers set lifetime_free_pages_used = lifetime_free_pages_used + p_pages
   where id = p_customer_id and lifetime_free_pages_used + free_pages_held + p_pages <= 10
  returning lifetime_free_pages_used into v_used;
  if found then return v_used; end if;
  perform expire_credit_holds(p_customer_id);
  update customers set lifetime_free_pages_used = lifetime_free_pages_used + p_pages
   where id = p_customer_id and lifetime_free_pages_used + free_pages_held + p_pages <= 10
  returning lifetime_free_pages_used into v_used;
  if found then return v_used; end if;
  if not exists (select 1 from customers where id = p_customer_id) then
    perform folio_raise_missing_customer(p_customer_id);
  end if;
  raise exception 'free page limit of 10 exceeded for customer %: % more requested', p_customer_id, p_pages using errcode = 'FC002';
end $$;

-- Charges pages to whichever balance the customer's plan uses.
create function charge_pages(p_customer_id uuid, p_pages integer) returns void
language plpgsql as $$
declare
  v_plan text;
begin
  select plan_type into v_plan from customers where id = p_customer_id;
  if not found then perform folio_raise_missing_customer(p_customer_id); end if;
  if v_plan = 'paid' then perform deduct_credits(p_customer_id, p_pages);
  else perform use_free_pages(p_customer_id, p_pages);
  end if;
end $$;

-- Reserves p_amount for a job for p_window. Raises FC001/FC002 when the
-- balance less other open holds cannot cover it.
create function create_credit_hold(p_customer_id uuid, p_amount integer, p_window interval, p_reference text default null)
returns uuid
language plpgsql as $$
declare
  v_plan text;
  v_id uuid;
begin
  if p_amount is null or p_amount <= 0 then
    raise exception 'hold amount must be positive' using errcode = '22023';
  end if;
  select plan_type into v_plan from customers where id = p_customer_id;
  if not found then perform folio_raise_missing_customer(p_customer_id); end if;
  perform expire_credit_holds(p_customer_id);
  if v_plan = 'paid' then
    update customers set credits_held = credits_held + p_amount
     where id = p_customer_id and credits_remaining - credits_held >= p_amount;
    if not found then
      raise exception 'insufficient credits for customer %: % needed', p_customer_id, p_amount using errcode = 'FC001';
    end if;
  else
    update customers set free_pages_held = free_pages_held + p_amount
     where id = p_customer_id and lifetime_free_pages_used + free_pages_held + p_amount <= 10;
    if not found then
      raise exception 'free page limit of 10 exceeded for customer %: % more requested', p_customer_id, p_amount using errcode = 'FC002';
    end if;
  end if;
  insert into credit_holds (customer_id, pool, amount, expires_at, reference)
  values (p_customer_id, case when v_plan = 'paid' then 'credits' else 'free_pages' end, p_amount, now() + p_window, p_reference)
  returning id into v_id;
  return v_id;
end $$;

-- Takes the hold row and gives back its reservation. Returns the locked row;
-- raises FC004/FC005 when it is missing or already settled/released.
create function folio_take_hold(p_hold_id uuid) returns credit_holds
language plpgsql as $$
declare
  v_hold credit_holds;
begin
  select * into v_hold from credit_holds where id = p_hold_id for update;
  if not found then
    raise exception 'credit hold % not found', p_hold_id using errcode = 'FC004';
  end if;
  if v_hold.status in ('settled', 'released') then
    raise exception 'credit hold % is already %', p_hold_id, v_hold.status using errcode = 'FC005';
  end if;
  if v_hold.status = 'held' then
    if v_hold.pool = 'credits' then
      update customers set credits_held = credits_held - v_hold.amount where id = v_hold.customer_id;
    else
      update customers set free_pages_held = free_pages_held - v_hold.amount where id = v_hold.customer_id;
    end if;
  end if;
  return v_hold;
end $$;

-- Settles a hold to the actual charge (which may differ from the estimate).
-- An expired hold can still be settled: the work was done, so it is charged
-- if the balance covers it.
create function settle_credit_hold(p_hold_id uuid, p_actual integer) returns void
language plpgsql as $$
declare
  v_hold credit_holds;
begin
  v_hold := folio_take_hold(p_hold_id);
  if p_actual > 0 then
    if v_hold.pool = 'credits' then perform deduct_credits(v_hold.customer_id, p_actual);
    else perform use_free_pages(v_hold.customer_id, p_actual);
    end if;
  end if;
  update credit_holds set status = 'settled', outcome = 'settled', charged = p_actual, resolved_at = now()
   where id = p_hold_id;
end $$;

-- Releases a hold without charging; p_outcome is cancelled, failed or expired.
create function release_credit_hold(p_hold_id uuid, p_outcome text) returns void
language plpgsql as $$
declare
  v_hold credit_holds;
begin
  if p_outcome not in ('cancelled', 'failed', 'expired') then
    raise exception 'release outcome must be cancelled, failed or expired, not %', p_outcome using errcode = '22023';
  end if;
  v_hold := folio_take_hold(p_hold_id);
  update credit_holds set status = 'released', outcome = p_outcome, charged = 0, resolved_at = now()
   where id = p_hold_id;
end $$;

-- Moves an open hold's expiry (the batch lane stretches it, resume shrinks it back).
create function extend_credit_hold(p_hold_id uuid, p_expires_at timestamptz) returns void
language plpgsql as $$
begin
  update credit_holds set expires_at = p_expires_at where id = p_hold_id and status = 'held';
  if not found then
    raise exception 'credit hold % is not open', p_hold_id using errcode = 'FC005';
  end if;
end $$;
