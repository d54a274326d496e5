-- stats: the counters summed over every slot: a handful of rows however many tasks there are.
SELECT topic, state, sum(n)::bigint AS n FROM S.task_counts GROUP BY topic, state HAVING sum(n) <> 0
