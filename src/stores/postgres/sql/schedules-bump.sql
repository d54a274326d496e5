-- schedules-bump: schedules_version moved (ADR 0033), in the transaction of the write.
UPDATE S.meta SET value = (value::bigint + 1)::text WHERE key = 'schedules_version'
