/**
 * 0005: push subscriptions, one row per topic (src/core/push.ts). The subscription is one
 * JSON text (push-subscription-codec.ts): a handful of rows, rarely written and always
 * read whole, so columns per field would buy nothing and cost a migration for every new
 * option. updated_at is the subscription's updatedAt, kept as a column for operators
 * looking at the file with the sqlite3 shell. WITHOUT ROWID: the topic is the key.
 */
export const sql = `
CREATE TABLE push_subscriptions (
  topic        TEXT    PRIMARY KEY,
  subscription TEXT    NOT NULL CHECK (json_valid(subscription)),
  updated_at   INTEGER NOT NULL
) WITHOUT ROWID;
`;
