-- schema-mark: the schema marked as delayq's ($1) at the version $2 its migrations reached.
INSERT INTO S.meta (key, value) VALUES ('application', $1), ('schema_version', $2)
ON CONFLICT (key) DO UPDATE SET value = excluded.value
