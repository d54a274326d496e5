-- schema-shards: the schema's shard count, fixed when it was created (migration 0002).
SELECT value FROM S.meta WHERE key = 'shards'
