-- schedules-swap: each recurring schedule $1 whose text is still $2 set to $3 at $4 (a
-- compare-and-swap on the whole record); answers the ids swapped.
UPDATE S.schedules s SET schedule = i.next, updated_at = i.updated_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS i(id, expected, next, updated_at)
 WHERE s.id = i.id AND s.schedule = i.expected RETURNING s.id
