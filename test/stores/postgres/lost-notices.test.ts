/**
 * A due task whose notices are lost is still delivered, to a consumer in a process that does
 * not own its shard, within what the safety nets promise (the PostgreSQL twin of
 * test/stores/redis/lost-notices.test.ts). Two notices carry a task scheduled by one process
 * into a shard another owns: the producer's timers NOTIFY (to the owner's wheel) and the
 * owner's ready NOTIFY (shared.ts promote, to every process's consumers). A due pending row
 * is reservable by itself on PostgreSQL: nobody has to promote it, a consumer only has to run
 * its reserve statement, and what makes it run one without a notice is the ReadyWaiters sweep.
 *
 * How notices are lost here, with real PostgreSQL and no mock of it:
 * - muted: the process's LISTEN connection goes through a TCP relay of the test's that, once
 *   the process's probe was heard (listener.ts), stops passing anything from the server to
 *   it. The connection stays up, so the process believes notices arrive (no reconnect, no
 *   polling): a notice lost with the listener still connected. A listenUrl to a closed port
 *   cannot do this: the LISTEN connection is made in open, which then fails.
 * - deaf: listenUrl names another database of the server, where nobody notifies; the probe
 *   is not heard within PROBE_MS and the process polls (as through pgbouncer without listenUrl).
 *
 * The nets (each case names its bound): a consumer re-checks its lane at the topic's sweep,
 * SWEEP_MS after the last (shared.ts; POLL_MS while polling), whichever reserve call spans or
 * follows that mark (ready-waiters.ts). The owner's recoverer is no net here: it expires
 * reservations, and a pending row needs no promotion. So a lost ready notice and a lost
 * timers notice (the owner never promotes, so no ready notice is sent) have the same bound.
 *
 * The consumer polls as clients do: short reserve calls one after the other (waitMs 500), or
 * calls that do not wait at all (waitMs 0) every 200 ms.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../src/core/ports/index.js';
import { shardOf } from '../../../src/coordination/router.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import { PROBE_MS } from '../../../src/stores/postgres/listener.js';
import type { PostgresStore } from '../../../src/stores/postgres/postgres-store.js';
import { POLL_MS } from '../../../src/stores/postgres/shared.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { consumeUntil, type Delivered } from '../../helpers/lost-notices.js';
import { dropSchema, freshSchema, PG_URL, pgUrlWith } from '../../helpers/postgres.js';

/** The consumer's sweep while it counts on notices (shared.ts SWEEP_MS). */
const SWEEP_MS = 2_000;
/** The reserve statement, a waitMs-0 pause, scheduling, on a loaded machine. */
const MARGIN_MS = 1_500;
/** After the delivery, polled this long (more than a sweep) for a second one. */
const WATCH_MORE_MS = SWEEP_MS + 500;
const SHORT_POLL_MS = 500;
/** A consumer that does not wait (waitMs 0) calls this often. */
const NO_WAIT_PAUSE_MS = 200;
/**
 * The task falls due this long after it is scheduled, and the consumer's first call (which
 * starts its lane's sweep clock) follows the schedule at once: due 400 ms after the first
 * sweep (two waitMs-0 calls past its mark), it waits for the next, about SWEEP_MS later.
 * The worst phase, not a lucky one.
 */
const LEAD_MS = SWEEP_MS + 400;

/** A TCP relay to the server; `mute` stops what the server sends from reaching the clients (the connections stay up). */
class MuteRelay {
  private muted = false;
  /** Bytes the server sent to a muted client: the notices lost. */
  dropped = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async start(): Promise<MuteRelay> {
    const target = new URL(PG_URL);
    const server = createServer();
    const relay = new MuteRelay(server);
    server.on('connection', (client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        relay.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          relay.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => upstream.write(chunk));
      upstream.on('data', (chunk: Buffer) => {
        if (relay.muted) relay.dropped += chunk.length;
        else client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  /** PG_URL through this relay. */
  url(): string {
    const url = new URL(PG_URL);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as { port: number }).port);
    url.search = '';
    return url.href;
  }

  mute(): void {
    this.muted = true;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** How a process's notices are lost: not at all, muted (it believes it listens) or deaf (it knows, and polls). */
type Hearing = 'hears' | 'muted' | 'deaf';

interface Case {
  readonly owner: Hearing;
  readonly consumer: Hearing;
  readonly producer: 'owner' | 'consumer';
  readonly boundMs: number;
  readonly waitMs: number;
}

describe('postgres: a due task whose notices are lost', () => {
  const schemas: string[] = [];
  let relay: MuteRelay;
  before(async () => {
    relay = await MuteRelay.start();
  });
  after(async () => {
    await relay.stop();
    for (const schema of schemas) await dropSchema(schema);
  });

  /** Warnings of a process: "consumers poll" says it found that notices do not arrive. */
  function warningsLogger(warnings: string[]): Logger {
    const note = (): void => undefined;
    return { debug: note, info: note, error: note, warn: (_fields, message) => void warnings.push(message ?? '') };
  }

  async function open(schema: string, hearing: Hearing, warnings: string[]): Promise<PostgresStore> {
    const listenUrl = hearing === 'muted' ? relay.url() : hearing === 'deaf' ? pgUrlWith({ database: 'postgres' }) : undefined;
    return (await openPostgresStore(`${PG_URL}?schema=${schema}&poolSize=3`, { clock: storeSystemClock, logger: warningsLogger(warnings), ...(listenUrl ? { listenUrl } : {}) })) as PostgresStore;
  }

  /**
   * Two processes on a fresh schema: the owner opens first, the consumer second; once the 16
   * shards are shared 8 and 8, the task's id is one of a shard the owner holds.
   */
  async function run(t: TestContext, name: string, c: Case): Promise<void> {
    const schema = freshSchema('lost');
    schemas.push(schema);
    const ownerWarnings: string[] = [];
    const consumerWarnings: string[] = [];
    // The relay mutes every connection through it: open both before muting.
    const ownerStore = await open(schema, c.owner, ownerWarnings);
    const owner = await DelayQueue.open({ store: ownerStore });
    let consumer: DelayQueue | undefined;
    let runAt: number;
    let id: string;
    let seen: Delivered[];
    try {
      const consumerStore = await open(schema, c.consumer, consumerWarnings);
      consumer = await DelayQueue.open({ store: consumerStore });
      const settleBy = Date.now() + 15_000;
      const sizes = (): number[] => [ownerStore.coordination.leases.size, consumerStore.coordination.leases.size];
      while (!(sizes()[0] === 8 && sizes()[1] === 8) && Date.now() < settleBy) await sleep(50);
      assert.deepEqual(sizes(), [8, 8], 'the shards shared 8 and 8');
      if (c.owner === 'deaf' || c.consumer === 'deaf') {
        // The deaf find it out at their probe's deadline, and poll from then on.
        const deaf = [...(c.owner === 'deaf' ? [ownerWarnings] : []), ...(c.consumer === 'deaf' ? [consumerWarnings] : [])];
        const pollingBy = Date.now() + PROBE_MS + 3_000;
        while (!deaf.every((w) => w.some((m) => m.includes('consumers poll'))) && Date.now() < pollingBy) await sleep(50);
        assert.ok(deaf.every((w) => w.some((m) => m.includes('consumers poll'))), 'a deaf process polls');
      }
      relay.mute();
      let n = 0;
      do id = `${name}-${n++}`;
      while (!ownerStore.coordination.leases.owns(shardOf(id, 16)));
      runAt = Date.now() + LEAD_MS;
      await (c.producer === 'owner' ? owner : consumer).schedule({ id, topic: 'lost', payload: null, runAt });
      seen = await consumeUntil(consumer, 'lost', { until: runAt + c.boundMs, watchMoreMs: WATCH_MORE_MS, waitMs: c.waitMs, noWaitPauseMs: NO_WAIT_PAUSE_MS });
    } finally {
      await consumer?.close();
      await owner.close();
    }
    const delay = seen[0] === undefined ? null : seen[0].at - runAt;
    t.diagnostic(`${name}: delivered ${seen.length} time(s), ${delay === null ? 'never' : `${delay} ms after runAt`} (bound ${c.boundMs} ms)`);
    for (const [who, hearing, warnings] of [['owner', c.owner, ownerWarnings], ['consumer', c.consumer, consumerWarnings]] as const)
      if (hearing === 'muted') assert.ok(!warnings.some((m) => m.includes('consumers poll')), `the muted ${who} believed notices arrived (it did not poll)`);
    if (c.owner === 'muted' || c.consumer === 'muted') assert.ok(relay.dropped > 0, 'a notice was sent to a muted process, and lost');
    assert.equal(seen.length, 1, `delivered exactly once within ${c.boundMs} ms of runAt (got ${seen.length})`);
    assert.equal(seen[0]!.id, id);
    assert.ok(delay! >= 0, `not before its runAt (${delay} ms)`);
    assert.ok(delay! <= c.boundMs, `within ${c.boundMs} ms of runAt (${delay} ms)`);
  }

  // A muted case starts unmuted, on a relay of its own: a relay stays muted once muted.
  const fresh = async (): Promise<void> => {
    await relay.stop();
    relay = await MuteRelay.start();
  };

  it('(a) the ready notice of the owner is lost to the consumer (muted): its sweep finds the task, waitMs 500', { timeout: 60_000 }, async (t) => {
    await fresh();
    await run(t, 'ready-lost', { owner: 'hears', consumer: 'muted', producer: 'owner', boundMs: SWEEP_MS + MARGIN_MS, waitMs: SHORT_POLL_MS });
  });

  it('(a) the same with a consumer that does not wait (waitMs 0 every 200 ms): its calls sweep too', { timeout: 60_000 }, async (t) => {
    await fresh();
    await run(t, 'ready-lost-nowait', { owner: 'hears', consumer: 'muted', producer: 'owner', boundMs: SWEEP_MS + MARGIN_MS, waitMs: 0 });
  });

  it('(b) the timers notice of the consumer is lost to the owner (muted): no promotion, no ready notice; the sweep finds it', { timeout: 60_000 }, async (t) => {
    await fresh();
    await run(t, 'timer-lost', { owner: 'muted', consumer: 'hears', producer: 'consumer', boundMs: SWEEP_MS + MARGIN_MS, waitMs: SHORT_POLL_MS });
  });

  it('(c) both muted, waitMs 0: the sweep finds it', { timeout: 60_000 }, async (t) => {
    await fresh();
    await run(t, 'both-lost-nowait', { owner: 'muted', consumer: 'muted', producer: 'consumer', boundMs: SWEEP_MS + MARGIN_MS, waitMs: 0 });
  });

  it('(d) a deaf consumer (listenUrl on another database) polls every POLL_MS, waitMs 500', { timeout: 60_000 }, async (t) => {
    await run(t, 'deaf', { owner: 'hears', consumer: 'deaf', producer: 'owner', boundMs: POLL_MS + MARGIN_MS, waitMs: SHORT_POLL_MS });
  });

  it('(d) a deaf consumer, waitMs 0 every 200 ms: its calls poll too', { timeout: 60_000 }, async (t) => {
    await run(t, 'deaf-nowait', { owner: 'hears', consumer: 'deaf', producer: 'owner', boundMs: POLL_MS + MARGIN_MS, waitMs: 0 });
  });
});
