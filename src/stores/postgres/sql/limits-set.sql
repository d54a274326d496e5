-- limits-set: topic $1's limits set to $2 at $3, and limits_version moved with them in the
-- same statement when they changed. Answers 1 when they changed, else 0.
WITH changed AS (
  INSERT INTO S.topic_limits (topic, limits, set_at) VALUES ($1, $2, $3)
  ON CONFLICT (topic) DO UPDATE SET limits = excluded.limits, set_at = excluded.set_at
   WHERE S.topic_limits.limits IS DISTINCT FROM excluded.limits RETURNING topic
),
bumped AS (UPDATE S.meta SET value = (value::bigint + 1)::text WHERE key = 'limits_version' AND EXISTS (SELECT 1 FROM changed) RETURNING 1)
SELECT (SELECT count(*) FROM changed) + 0 * (SELECT count(*) FROM bumped) AS changed
