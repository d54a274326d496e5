-- schedules-version: schedules_version as it is.
SELECT value FROM S.meta WHERE key = 'schedules_version'
