-- list: up to $4 tasks after id $1 in id order, of topic $2 and state $3 (NULL: any).
SELECT
-- @include task-columns
  FROM S.tasks WHERE id > $1 AND ($2::text IS NULL OR topic = $2) AND ($3::text IS NULL OR state = $3) ORDER BY id LIMIT $4
