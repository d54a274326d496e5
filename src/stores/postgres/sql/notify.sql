-- notify: the payloads $2 sent on channel $1 (channels.ts), when the transaction commits.
SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p
