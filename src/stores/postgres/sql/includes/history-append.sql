-- history-append: `history = ...` of a settlement (migration 0005, ADR 0041): the attempt's
-- entry [attempt, startedAt, durationMs, outcome, error] appended to the history of the
-- tasks row `t`, the oldest dropped beyond 10 (core/task/history.ts HISTORY_LIMIT), from a
-- row `a` with `now`, `outcome` and `error` (cut already: historyError). Read in the SET of
-- the settling UPDATE, attempts and updated_at are the row as it was: the attempt's number
-- and the time of its reservation.
history = (CASE WHEN jsonb_array_length(t.history) >= 10 THEN t.history - 0 ELSE coalesce(t.history, '[]'::jsonb) END)
          || jsonb_build_array(jsonb_build_array(coalesce(t.attempts, 0), coalesce(t.updated_at, t.created_at),
                                                 greatest(0, a.now - coalesce(t.updated_at, t.created_at)), a.outcome, a.error))
