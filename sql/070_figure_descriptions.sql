-- Descriptions people give the figures of a finished conversion
-- (PUT /api/files/:fileId/figures/:figureId). A figure is named by its id in
-- the job's stored pages (server/conversion/figures.ts: p<page>-<n>), so a
-- description belongs to one job: a new conversion of the same file starts
-- over, since its figures may differ.
--
-- Invariant: a description is either alt text or "decorative", never both.
create table figure_descriptions (
  job_id uuid not null references large_conversion_jobs (id) on delete cascade,
  figure_id text not null check (figure_id ~ '^p[1-9][0-9]{0,5}-[1-9][0-9]{0,4}$'),
  alt text check (alt is null or char_length(alt) between 1 and 2000),
  decorative boolean not null default false,
  described_by uuid references users (id) on delete set null,
  updated_at timestamptz not null default now(),
  primary key (job_id, figure_id),
  constraint figure_descriptions_alt_or_decorative check ((decorative and alt is null) or (not decorative and alt is not null))
);
