-- The model budget and the cost monitors (README "Model budget and cost monitors").
--
-- model_budget: one row. Limits set by an admin override MODEL_BUDGET_DAILY_USD /
-- MODEL_BUDGET_MONTHLY_USD (null: the environment's). paused_at is set while the
-- spend of the current UTC day or month is at or over its limit: chunk claims
-- then move their job to paused_budget instead of starting a page.
create table model_budget (
  id boolean primary key default true check (id),
  daily_usd numeric(14, 6) check (daily_usd > 0),
  monthly_usd numeric(14, 6) check (monthly_usd > 0),
  paused_at timestamptz,
  paused_reason text,
  updated_at timestamptz not null default now()
);
insert into model_budget (id) values (true);

-- One row per alert mailed: the 80% warning and the 100% kill-switch fire once per period.
create table model_budget_alerts (
  period text not null check (period in ('daily', 'monthly')),
  period_start date not null,
  level text not null check (level in ('warning', 'exhausted')),
  spend_usd numeric(14, 6) not null,
  limit_usd numeric(14, 6) not null,
  sent_at timestamptz not null default now(),
  primary key (period, period_start, level)
);

-- A monitor fires when its condition starts to hold and again only after it has cleared.
create table cost_monitor_state (
  name text primary key check (name in ('cost_spike', 'cost_trickle')),
  firing boolean not null default false,
  changed_at timestamptz not null default now(),
  detail jsonb not null default '{}'
);
insert into cost_monitor_state (name) values ('cost_spike'), ('cost_trickle');

-- The specification's ledger rows carry a backend (the batch row's is chunked-vision).
alter table cost_ledger add column if not exists backend text;
-- Every budget and monitor query is a time range over the ledger.
create index if not exists cost_ledger_created_idx on cost_ledger (created_at);
