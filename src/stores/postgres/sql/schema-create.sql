-- schema-create: the schema, when it is missing (schema.ts looked first: CREATE SCHEMA needs
-- CREATE on the database even when the schema exists, which a role given a schema lacks).
CREATE SCHEMA IF NOT EXISTS "{schema}"
