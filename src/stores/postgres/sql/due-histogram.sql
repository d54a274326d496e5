-- due-histogram: pending tasks due in [$1, $3) of topic $4 (NULL: any), counted per bucket of $2 ms.
SELECT ((due_at - $1) / $2)::int AS b, count(*)::int AS n FROM S.tasks
 WHERE due_at >= $1 AND due_at < $3 AND state = 'pending' AND ($4::text IS NULL OR topic = $4) GROUP BY b
