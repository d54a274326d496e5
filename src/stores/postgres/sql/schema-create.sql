-- schema-create: the schema, unless it exists.
CREATE SCHEMA IF NOT EXISTS "{schema}"
