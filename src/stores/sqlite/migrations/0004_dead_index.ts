/**
 * 0004: dead tasks get an index of their own, by id. Listing dead letters (`list` with
 * state 'dead': `GET /v1/tasks?state=dead`, `delayq ls --state dead`) walked the id
 * index over every row and kept the few dead ones: a full scan of an old database for ten
 * rows. A partial index holds the dead tasks alone, so it costs a write only when a task
 * dies or is retried from dead, never on the schedule / reserve / ack path.
 */
export const sql = `
CREATE INDEX tasks_dead ON tasks (id) WHERE state = 'dead';
`;
