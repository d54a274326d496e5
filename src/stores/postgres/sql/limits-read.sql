-- limits-read: every limited topic's limits as [topic, limits] pairs, and their version, in one snapshot.
SELECT (SELECT value FROM S.meta WHERE key = 'limits_version') AS version,
       (SELECT json_agg(json_build_array(topic, limits) ORDER BY topic) FROM S.topic_limits) AS limits
