-- pause: topic $1 paused at $2, and paused_version moved in the same statement when it was
-- not paused. Answers 1 when it changed, else 0.
WITH changed AS (INSERT INTO S.paused_topics (topic, paused_at) VALUES ($1, $2) ON CONFLICT (topic) DO NOTHING RETURNING topic),
bumped AS (UPDATE S.meta SET value = (value::bigint + 1)::text WHERE key = 'paused_version' AND EXISTS (SELECT 1 FROM changed) RETURNING 1)
SELECT (SELECT count(*) FROM changed) + 0 * (SELECT count(*) FROM bumped) AS changed
