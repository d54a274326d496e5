-- counted: the counter deltas of a statement's changes, in the statement (a data-modifying
-- CTE). The statement names its changed rows first, as a CTE
--   changes (slot, topic, from_state, to_state)
-- (slot: the writer's counter slot, the same in every row). This spells the model of
-- src/core/task/counter-deltas.ts: -1 on (topic, from) and +1 on (topic, to) when they differ,
-- none for a side that is NULL (created, purged). Rows are upserted in (topic, state) order,
-- so two statements never wait for each other in a cycle (counters.ts).
counted AS (
  INSERT INTO S.task_counts AS c (slot, topic, state, n)
  SELECT slot, topic, state, sum(n)::bigint FROM (
    SELECT slot, topic, from_state AS state, -1 AS n FROM changes WHERE from_state IS NOT NULL AND from_state IS DISTINCT FROM to_state
    UNION ALL
    SELECT slot, topic, to_state, 1 FROM changes WHERE to_state IS NOT NULL AND from_state IS DISTINCT FROM to_state
  ) d GROUP BY slot, topic, state ORDER BY topic, state
  ON CONFLICT (slot, topic, state) DO UPDATE SET n = c.n + excluded.n
)
