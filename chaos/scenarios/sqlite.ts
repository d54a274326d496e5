import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { spawnWorker, stopWorker } from '../processes.js';
import { base, drain, pick, type Row, type Run, scenario, type Scenario } from '../round.js';

async function sqliteKills(run: Run, kills: number): Promise<Row> {
  return scenario(run, 'sqlite: SIGKILL', `the one process SIGKILLed ${kills}x under load`, 'clean', async (round) => {
    round.sqlite = join(round.dir, 'q.db');
    const store = `sqlite:${round.sqlite}`;
    for (let k = 0; k < kills; k++) {
      const worker = spawnWorker(base(store, `s${k}`), round);
      await worker.ready;
      await sleep(pick(600, 1_500));
      worker.signal('SIGKILL');
      await worker.exited;
    }
    const last = spawnWorker(base(store, 'last', { rate: 0 }), round);
    await last.ready;
    await drain(round);
    await stopWorker(last);
  });
}

export const sqliteScenario: Scenario = { name: 'sqlite', needs: null, run: (run) => sqliteKills(run, run.short ? 5 : 20) };
