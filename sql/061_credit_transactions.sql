-- Credits coming in: admin grants and purchases, one row each, with the
-- receipt that was mailed for it. A purchase is keyed on its payment
-- reference, so a payment provider's webhook delivered twice credits once.
create table credit_transactions (
  id uuid primary key default gen_random_uuid(),
  kind text not null check (kind in ('grant', 'purchase')),
  customer_id uuid not null references customers (id),
  credits integer not null check (credits > 0),
  amount_cents bigint check (amount_cents >= 0),
  currency text check (currency ~ '^[A-Z]{3}$'),
  payment_reference text,
  reason text check (length(reason) <= 500),
  actor_id uuid references users (id) on delete set null,
  balance_after integer not null,
  -- the library's answer for the receipt; null until one was tried
  receipt_status text check (receipt_status in ('sent', 'deferred', 'suppressed', 'failed')),
  receipt_log_id uuid,
  created_at timestamptz not null default now(),
  constraint credit_transactions_payment_reference_key unique (payment_reference),
  constraint credit_transactions_purchase_reference check (kind <> 'purchase' or payment_reference is not null)
);
create index credit_transactions_customer_idx on credit_transactions (customer_id, created_at desc);

-- Adds credits: the customer becomes a paid customer (the free tier has no
-- credit balance). Returns the new balance; FC003 when the customer is missing.
create function grant_credits(p_customer_id uuid, p_credits integer) returns integer
language plpgsql as $$
declare
  v_remaining integer;
begin
  if p_credits is null or p_credits <= 0 then
    raise exception 'credits must be a positive integer' using errcode = '22023';
  end if;
  update customers set credits_remaining = credits_remaining + p_credits, plan_type = 'paid'
   where id = p_customer_id
  returning credits_remaining into v_remaining;
  if not found then perform folio_raise_missing_customer(p_customer_id); end if;
  return v_remaining;
end $$;
