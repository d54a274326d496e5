/** Limits and pause set through one of three processes on one PostgreSQL schema hold in all of them from the first wave (issue 46; test/helpers/limits-fleet.ts). */
import { limitsAcrossProcesses } from '../../helpers/limits-fleet.js';
import { dropSchema, freshSchema, storeUrl } from '../../helpers/postgres.js';

limitsAcrossProcesses('postgres', async () => {
  const schema = freshSchema('limits');
  return { url: storeUrl(schema), storeOptions: {}, cleanup: () => dropSchema(schema) };
});
