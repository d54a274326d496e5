-- resume: topic $1 no longer paused, and paused_version moved in the same statement when it
-- was. Answers 1 when it changed, else 0.
WITH changed AS (DELETE FROM S.paused_topics WHERE topic = $1 RETURNING topic),
bumped AS (UPDATE S.meta SET value = (value::bigint + 1)::text WHERE key = 'paused_version' AND EXISTS (SELECT 1 FROM changed) RETURNING 1)
SELECT (SELECT count(*) FROM changed) + 0 * (SELECT count(*) FROM bumped) AS changed
