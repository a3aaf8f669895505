-- Changesets (issue 27): written by the changesets work.
SELECT 1;
