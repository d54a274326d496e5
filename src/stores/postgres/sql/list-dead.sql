-- list-dead: up to $3 dead tasks after id $1 in id order, of topic $2 (NULL: any), through
-- the partial index tasks_dead (the literal 'dead' matches its predicate).
SELECT
-- @include task-columns
  FROM S.tasks WHERE state = 'dead' AND id > $1 AND ($2::text IS NULL OR topic = $2) ORDER BY id LIMIT $3
