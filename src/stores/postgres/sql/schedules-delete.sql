-- schedules-delete: recurring schedule $1 removed.
DELETE FROM S.schedules WHERE id = $1
