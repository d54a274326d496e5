-- schema-meta: the marks of a delayq schema: whose it is, and the version its migrations reached.
SELECT key, value FROM S.meta WHERE key IN ('application', 'schema_version')
