-- 0004: paused topics (issue 36, ADR 0040): a row per paused topic, and `paused_version` in
-- meta, moved by the same statement as the set, so every process sharing the schema sees
-- the change at its next read (within pauseSyncMs).

CREATE TABLE S.paused_topics (
  topic     text COLLATE "C" PRIMARY KEY,
  paused_at bigint NOT NULL
);

INSERT INTO S.meta (key, value) VALUES ('paused_version', '0');
