-- schema-relations: the names of what schema $1 holds (none: absent or empty).
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
