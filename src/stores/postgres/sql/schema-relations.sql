-- schema-relations: whether schema $1 exists, and the names of what it holds: no row when it
-- is missing, one row with a NULL name when it is empty.
SELECT c.relname FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid WHERE n.nspname = $1
