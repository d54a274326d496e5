-- pauses-read: the paused topics and their version, in one snapshot.
SELECT (SELECT value FROM S.meta WHERE key = 'paused_version') AS version,
       coalesce((SELECT array_agg(topic ORDER BY topic) FROM S.paused_topics), '{}') AS topics
