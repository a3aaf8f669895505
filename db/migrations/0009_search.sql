-- Full-text search index (issue 24): written by the search work.
SELECT 1;
