/**
 * 0008: a completed task remembers the receipt whose ack completed it (`acked_receipt`), so
 * the same ack sent again (its reply was lost, the client retried) answers 'acked' instead
 * of 'stale'. Acks are idempotent for as long as the completed task is kept (until purge).
 *
 * A column of its own, not `receipt`: the table CHECK of 0001 keeps `receipt` NULL outside
 * `reserved`, and changing a CHECK means copying every row. ADD COLUMN with no default is
 * a change to the table's text only: constant time on a database of any size; rows
 * completed before it answer 'stale' to a repeated ack, as they did.
 *
 * Numbered 0008: 0006 and 0007 belong to other branches (they land in between when merged).
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN acked_receipt TEXT;
`;
