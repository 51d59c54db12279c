-- Preserve Formatting results: the positioned HTML a flyer worker stored.
alter table flyer_jobs add column result_key text;
alter table flyer_jobs add column pages integer check (pages >= 0);

-- A flyer worker's failure, guarded by its claim like every worker write:
-- failed with the reason, refunded (nothing is charged for a result nobody
-- got), claim dropped. False when the claim was lost (cancelled meanwhile).
create function fail_flyer_job(p_flyer_id uuid, p_claim_id uuid, p_message text) returns boolean
language plpgsql as $$
declare
  v_flyer flyer_jobs;
begin
  select * into v_flyer from flyer_jobs where id = p_flyer_id and claim_id = p_claim_id and status = 'processing' for update;
  if not found then return false; end if;
  if v_flyer.credits_charged > 0 and not v_flyer.refunded then
    update customers c
       set credits_remaining = case when c.plan_type = 'paid' then c.credits_remaining + v_flyer.credits_charged else c.credits_remaining end,
           lifetime_free_pages_used = case when c.plan_type = 'paid' then c.lifetime_free_pages_used
                                           else greatest(0, c.lifetime_free_pages_used - v_flyer.credits_charged) end
     where c.id = v_flyer.customer_id;
  end if;
  update flyer_jobs set status = 'failed', error_message = left(p_message, 500), claim_id = null,
         refunded = refunded or credits_charged > 0, updated_at = now()
   where id = p_flyer_id;
  return true;
end $$;
