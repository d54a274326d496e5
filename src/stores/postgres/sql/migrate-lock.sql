-- migrate-lock: the schema's migration lock, held until the transaction ends, so two
-- processes that open a new schema at once migrate it once (schema.ts). $1 the schema's name.
SELECT pg_advisory_xact_lock(hashtext('delayq migrate ' || $1))
