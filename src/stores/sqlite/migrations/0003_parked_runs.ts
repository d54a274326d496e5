/**
 * 0003: parked tasks are filed in runs (parked_runs) instead of the index tasks_parked on
 * (park_bucket, seq); see parking.ts for why. A run is one bucket and the seqs of rows
 * parked in it, packed by seq-runs.ts. The runs of an existing database are built from
 * that index, bucket by bucket in seq order, before it is dropped.
 *
 * AUTOINCREMENT: a pass over parked_runs walks it in run order and must meet every run
 * written after its cursor, so a run number is never reused, not even after the run
 * holding the highest one was deleted.
 *
 * parking_state keeps the frontier (the first bucket that may hold parked tasks) across
 * restarts: without it, the first loadDue after an open would have to read every run
 * before it could answer. It also keeps the width of a bucket (2^26 ms; the bucket
 * numbers in tasks, runs and frontier only mean something with the width they were
 * computed with), which the index-based parking before 0003 used as well.
 */
import type Database from 'better-sqlite3';
import { encodeSeqs } from '../seq-runs.js';

/** Seqs per run; fixed here so that this migration writes the same runs forever. */
const RUN = 256;

export const sql = `
CREATE TABLE parked_runs (
  run    INTEGER PRIMARY KEY AUTOINCREMENT,
  bucket INTEGER NOT NULL,
  seqs   BLOB    NOT NULL
);

CREATE TABLE parking_state (
  id        INTEGER PRIMARY KEY CHECK (id = 1),
  frontier  INTEGER NOT NULL,
  bucket_ms INTEGER NOT NULL CHECK (bucket_ms >= 1)
);

INSERT INTO parking_state (id, frontier, bucket_ms) VALUES (1, 0, 67108864);
`;

export function apply(db: Database.Database): void {
  const buckets = db.prepare<[], number>('SELECT DISTINCT park_bucket FROM tasks WHERE park_bucket IS NOT NULL ORDER BY park_bucket').pluck().all();
  const seqsIn = db.prepare<[number, number, number], number>('SELECT seq FROM tasks WHERE park_bucket = ? AND seq > ? ORDER BY seq LIMIT ?').pluck();
  const addRun = db.prepare<[number, Buffer]>('INSERT INTO parked_runs (bucket, seqs) VALUES (?, ?)');
  for (const bucket of buckets) {
    for (let after = 0; ; ) {
      const seqs = seqsIn.all(bucket, after, RUN);
      if (seqs.length === 0) break;
      addRun.run(bucket, encodeSeqs(seqs));
      after = seqs[seqs.length - 1]!;
    }
  }
  db.exec('DROP INDEX tasks_parked');
}
