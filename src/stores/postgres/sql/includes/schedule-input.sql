-- schedule-input: the `input` CTE of a schedule, one row per new task in input order (ord).
-- Arrays ($n, array-literal.ts): $1 ids, $2 topics, $3 runAts, $4 maxAttempts, $5 ttrMs,
-- $6 backoff base ms, $7 backoff factors, $8 backoff max ms, $9 jitters, $10 urls, $11
-- payloads, $12 nows, $14 shards, $15 traces, $16 priorities (empty when all are 0) ($13 is the counter slot). A column the whole batch agrees on
-- may come as one element (`uniform`): coalesce reads it for a column never NULL; a policy
-- column's NULL is a value (the stored default, migration 0009), so it is read by cardinality.
input AS (
  SELECT id, coalesce(topic, ($2::text[])[1]) AS topic, run_at,
         CASE WHEN cardinality($4::int[]) = 1 THEN ($4::int[])[1] ELSE max_attempts END AS max_attempts,
         CASE WHEN cardinality($5::bigint[]) = 1 THEN ($5::bigint[])[1] ELSE ttr_ms END AS ttr_ms,
         CASE WHEN cardinality($6::bigint[]) = 1 THEN ($6::bigint[])[1] ELSE base_ms END AS base_ms,
         CASE WHEN cardinality($7::float8[]) = 1 THEN ($7::float8[])[1] ELSE factor END AS factor,
         CASE WHEN cardinality($8::bigint[]) = 1 THEN ($8::bigint[])[1] ELSE max_ms END AS max_ms,
         CASE WHEN cardinality($9::float8[]) = 1 THEN ($9::float8[])[1] ELSE jitter END AS jitter,
         url, trace, coalesce(priority, 0) AS priority, payload, coalesce(now, ($12::bigint[])[1]) AS now, shard, ord
    FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::bigint[], $6::bigint[], $7::float8[], $8::bigint[], $9::float8[], $10::text[], $11::text[], $12::bigint[], $14::smallint[], $15::text[], $16::smallint[])
         WITH ORDINALITY AS i(id, topic, run_at, max_attempts, ttr_ms, base_ms, factor, max_ms, jitter, url, payload, now, shard, trace, priority, ord)
)
