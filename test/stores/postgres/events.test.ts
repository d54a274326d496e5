import { describe } from 'node:test';
import { sharedEventsTests } from '../../helpers/events.js';
import { dropSchema, freshSchema, storeUrl, withClient } from '../../helpers/postgres.js';

describe('lifecycle events on PostgreSQL', () => {
  sharedEventsTests(async () => {
    const schema = freshSchema('ev');
    return {
      url: `${storeUrl(schema)}&poolSize=2`,
      async writeGarbage() {
        await withClient((client) =>
          client.query(`INSERT INTO "${schema}".task_events (event) VALUES ('not json'), ($1), ('{}'), ($2)`, [
            JSON.stringify({ type: 'acked', id: 'x', topic: 't', attempt: 1, at: -5 }),
            JSON.stringify({ type: 'acked', id: 'x y', topic: 't', attempt: 1, at: 5 }),
          ]),
        );
        return 4;
      },
      cleanup: () => dropSchema(schema),
    };
  });
});
