-- limits-clear: topic $1's limits removed, and limits_version moved in the same statement
-- when there were some. Answers 1 when they were, else 0.
WITH changed AS (DELETE FROM S.topic_limits WHERE topic = $1 RETURNING topic),
bumped AS (UPDATE S.meta SET value = (value::bigint + 1)::text WHERE key = 'limits_version' AND EXISTS (SELECT 1 FROM changed) RETURNING 1)
SELECT (SELECT count(*) FROM changed) + 0 * (SELECT count(*) FROM bumped) AS changed
