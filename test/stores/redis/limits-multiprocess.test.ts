/** Limits and pause set through one of three processes on one Redis hold in all of them from the first wave (issue 46; test/helpers/limits-fleet.ts). */
import { limitsAcrossProcesses } from '../../helpers/limits-fleet.js';
import { redisSkip, startRedis } from '../../helpers/redis-servers.js';

redisSkip();
limitsAcrossProcesses('redis', async () => {
  const server = await startRedis();
  return {
    url: server.url,
    storeOptions: { prefix: 'limits' },
    cleanup: async () => {
      await server.stop();
      server.remove();
    },
  };
});
