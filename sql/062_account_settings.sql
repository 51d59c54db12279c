-- Account setting: mail me when a conversion I started completes or fails
-- (opt-in; conversions started by email get their reply instead).
alter table users add column conversion_result_email boolean not null default false;
