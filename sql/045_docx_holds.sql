-- A DOCX converts on the inline path (no large_conversion_jobs row), so the
-- credit hold taken at upload for its counted pages is kept on the file: the
-- DOCX job settles it after converting, or releases it when the conversion
-- fails or the stuck sweep gives the file up.
alter table files add column hold_id uuid references credit_holds (id);
