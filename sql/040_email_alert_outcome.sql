-- What became of a failed send's admin alert (specification: "Alert route
-- responses"): delivered, disabled (the alert type is muted), not_configured
-- (a wanted channel lacks its configuration, nothing was attempted) or failed
-- (channels attempted, none succeeded). Written each time the alert is raised,
-- beside the claim (alerted_at), which not_configured and failed give back so
-- the next event or poll alerts again.
alter table email_log add column alert_outcome text
  check (alert_outcome in ('delivered', 'disabled', 'not_configured', 'failed'));
