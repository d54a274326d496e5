import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { DelayQClient } from '../../src/client/index.js';
import { freePort } from '../../test/helpers/redis-servers.js';
import { spawnServer } from '../processes.js';
import { drain, pick, type Row, type Run, scenario, type Scenario } from '../round.js';

async function httpKills(run: Run, kills: number): Promise<Row> {
  return scenario(run, 'http: server SIGKILL', `delayq serve (SQLite) SIGKILLed ${kills}x under HTTP load (POST + reserve + ack)`, 'clean', async (round) => {
    round.sqlite = join(round.dir, 'q.db');
    const store = `sqlite:${round.sqlite}`;
    const port = await freePort();
    const client = new DelayQClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 5_000 });
    let server = await spawnServer(store, port);
    let running = true;
    let producing = true;
    const producer = (async () => {
      let n = 0;
      while (producing) {
        const tasks = Array.from({ length: 8 }, () => ({
          id: `h-${n++}`,
          topic: 'chaos',
          payload: { n },
          runAt: Date.now() + Math.floor(Math.random() * 1_500),
          ttrMs: 1_500,
          maxAttempts: 1_000,
        }));
        for (;;) {
          try {
            const results = await client.scheduleMany(tasks);
            for (let i = 0; i < tasks.length; i++) if (!('error' in results[i]!)) round.record(`S ${tasks[i]!.id} ${tasks[i]!.runAt}`);
            break;
          } catch {
            if (!producing) break;
            await sleep(100);
          }
        }
        await sleep(50);
      }
    })();
    const consumer = async (): Promise<void> => {
      while (running) {
        let batch;
        try {
          batch = await client.reserve('chaos', { max: 20, waitMs: 300 });
        } catch {
          await sleep(100);
          continue;
        }
        if (batch.length === 0) continue;
        for (const d of batch) round.record(`D ${d.id} ${d.attempt} ${d.reservedUntil - 1_500}`);
        for (let tries = 0; tries < 20 && running; tries++) {
          try {
            const outcomes = await client.ackMany(batch);
            const done = Date.now();
            batch.forEach((d, i) => outcomes[i] === 'acked' && round.record(`A ${d.id} ${d.attempt} ${done}`));
            break;
          } catch {
            await sleep(100);
          }
        }
      }
    };
    const consumers = [consumer(), consumer()];
    try {
      for (let k = 0; k < kills; k++) {
        await sleep(pick(800, 1_600));
        await server.kill();
        server = await spawnServer(store, port);
      }
      await sleep(1_000);
      producing = false;
      await producer;
      await drain(round);
    } finally {
      running = false;
      producing = false;
      await Promise.all([producer, ...consumers]);
      await server.stop();
    }
  });
}

export const httpScenario: Scenario = { name: 'http', needs: null, run: (run) => httpKills(run, run.short ? 3 : 10) };
