-- Notifications and email settings (issue 24): written by the notifications work.
SELECT 1;
