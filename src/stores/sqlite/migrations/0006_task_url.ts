/**
 * 0006: a task's own push target (`schedule({url})`, docs/push.md). A nullable column,
 * NULL for every task without one: existing rows need no rewrite (ALTER TABLE ADD COLUMN
 * only edits the schema) and a task without a url stores nothing more. It is written after
 * the insert, in the same transaction, only for the tasks that have one, so the batch
 * insert forms stay as they are.
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN url TEXT;
`;
