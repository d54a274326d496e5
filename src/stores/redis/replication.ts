/**
 * `waitReplicas`: durable through a failover, by choice. Redis replicates asynchronously,
 * so a master that fails after answering a write may take it with it: the replica promoted
 * in its place never had it (Jepsen's finding for Redis). With `waitReplicas: n`, every
 * write the store makes is followed on the same connection by `WAIT n timeoutMs` (one WAIT
 * for the writes of a shard sent together: execAndWait below), and the call resolves only
 * once n replicas acknowledged it; fewer within the timeout rejects with STORE_UNAVAILABLE
 * rather than pretending.
 *
 * On a cluster the pipeline goes to the master that owns the script's keys (ioredis routes
 * a pipeline by the slot of its keyed commands; WAIT has no key and follows them), so WAIT
 * counts that shard's replicas.
 *
 * A rejection after the write reached the master does not undo it: the write may be there,
 * and may be lost if the master fails now. Every write of the store is safe to repeat
 * (schedule by id, acks are idempotent, cancel and reschedule answer by state), so the
 * caller retries. WAIT does not make Redis strongly consistent either (a replica that
 * acknowledged may still lose the write if it restarts without AOF): it closes the window
 * where a failover loses a write the master acknowledged.
 */
import { Cluster, type ChainableCommander } from 'ioredis';
import { DelayQError } from '../../core/errors.js';
import { sendCoalesced, type RedisClient } from './connection.js';
import { keySlot } from './slot.js';

export interface WaitReplicas {
  /** Replicas that must acknowledge each write; 0 = off (Redis' own asynchronous replication). */
  readonly replicas: number;
  /** How long a write waits for them before it rejects (WAIT's timeout; never 0, which waits forever). */
  readonly timeoutMs: number;
}

// Their defaults and bounds (waitReplicas 0 to 16, waitTimeoutMs 1 to 60,000 ms, default 1,000): the options table.

const settings = new WeakMap<RedisClient, WaitReplicas>();

/** Every later write through `client` (script-runner.ts, plain-commands.ts) waits for replicas. */
export function requireReplicas(client: RedisClient, wait: WaitReplicas): void {
  if (wait.replicas > 0) settings.set(client, wait);
}

export function waitSetting(client: RedisClient): WaitReplicas | undefined {
  return settings.get(client);
}

/** Most writes one WAIT covers: a lane's backlog leaves in pipelines of at most this many. */
const MAX_WRITES_PER_WAIT = 128;

interface QueuedWrite {
  readonly what: string;
  readonly add: (pipeline: ChainableCommander) => void;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The writes of one slot (one shard) waiting for the WAIT in flight on it to answer. */
interface Lane {
  readonly queue: QueuedWrite[];
  sending: boolean;
}

const lanes = new WeakMap<RedisClient, Map<number, Lane>>();

/**
 * Runs the command(s) `add` queues, then WAIT, on the connection that owns `routeKey`'s
 * slot (send below says how they are pipelined): answers the last queued command's reply (or throws its error as it is,
 * for the caller to map), and throws STORE_UNAVAILABLE when fewer replicas than asked
 * acknowledged within the timeout.
 *
 * WAIT blocks the connection it runs on, so a write per WAIT would stack: with a replica
 * stopped, the k-th of k concurrent writes to a master answered after k timeouts, and every
 * other command to that master waited behind them (ADR 0047). So the writes of one slot
 * form a lane: one pipeline in flight, whose WAIT covers each write in it; the writes that
 * come meanwhile leave together in the next pipeline when it answers, or, if its replicas
 * fell short, are refused at once without being sent (the shard is then marked, and the
 * writes after are refused before they reach here).
 */
export function execAndWait(client: RedisClient, wait: WaitReplicas, what: string, routeKey: string, add: (pipeline: ChainableCommander) => void): Promise<unknown> {
  // One Redis is one connection: every write shares a lane. A cluster pipeline must stay in one slot.
  const slot = client instanceof Cluster ? keySlot(routeKey) : 0;
  let bySlot = lanes.get(client);
  if (bySlot === undefined) lanes.set(client, (bySlot = new Map<number, Lane>()));
  let lane = bySlot.get(slot);
  if (lane === undefined) bySlot.set(slot, (lane = { queue: [], sending: false }));
  const queued = new Promise<unknown>((resolve, reject) => lane.queue.push({ what, add, resolve, reject }));
  if (!lane.sending) {
    lane.sending = true;
    // A microtask, so the writes issued together go in one pipeline under one WAIT.
    queueMicrotask(() => void drain(client, wait, bySlot, slot, lane));
  }
  return queued;
}

async function drain(client: RedisClient, wait: WaitReplicas, bySlot: Map<number, Lane>, slot: number, lane: Lane): Promise<void> {
  while (lane.queue.length > 0) {
    const batch = lane.queue.splice(0, MAX_WRITES_PER_WAIT);
    let acknowledged: number | undefined;
    try {
      acknowledged = await send(client, wait, batch);
    } catch (error) {
      // Not expected (send settles its writes), but a lane left sending would hold every later write.
      for (const write of batch) write.reject(error);
    }
    if (acknowledged !== undefined && acknowledged < wait.replicas)
      for (const write of lane.queue.splice(0)) write.reject(notSent(write.what, wait, acknowledged));
  }
  lane.sending = false;
  bySlot.delete(slot);
}

/**
 * Sends `writes` and one WAIT after them; settles each write, and answers WAIT's count
 * (undefined when WAIT did not answer one). A cluster lane is one slot: one pipeline, so a
 * redirect moves the writes and their WAIT together. One Redis has no redirects, and there
 * each write leaves as its own pipeline, WAIT with the last: a large write then goes out
 * while the next is encoded, as without waitReplicas (connection.ts, sendCoalesced).
 */
async function send(client: RedisClient, wait: WaitReplicas, writes: readonly QueuedWrite[]): Promise<number | undefined> {
  const groups = client instanceof Cluster ? [writes] : writes.map((write) => [write]);
  const sent = groups.map((group, g) => {
    const pipeline = client.pipeline();
    const ends: number[] = [];
    try {
      for (const write of group) {
        write.add(pipeline);
        ends.push(pipeline.length);
      }
    } catch (error) {
      return { group, ends, replies: Promise.reject(error instanceof Error ? error : new Error(String(error))) };
    }
    if (g === groups.length - 1) pipeline.call('WAIT', wait.replicas, wait.timeoutMs);
    const expected = pipeline.length;
    const replies = sendCoalesced(client, () => pipeline.exec()).then((results) => {
      if (results === null || results.length !== expected) throw new Error(`${group[0]!.what}: the pipeline was discarded`);
      return results;
    });
    return { group, ends, replies };
  });
  const settled = await Promise.allSettled(sent.map((s) => s.replies));
  const last = settled[settled.length - 1]!;
  let waitError: unknown = null;
  let acknowledged: number | undefined;
  if (last.status === 'rejected') waitError = last.reason;
  else {
    const [error, reply] = last.value[last.value.length - 1]!;
    if (error) waitError = error;
    else acknowledged = Number(reply);
  }
  sent.forEach(({ group, ends }, g) => {
    const outcome = settled[g]!;
    let start = 0;
    group.forEach((write, i) => {
      const end = ends[i]!;
      if (outcome.status === 'rejected') return write.reject(outcome.reason);
      const failed = outcome.value.slice(start, end).find(([error]) => error !== null);
      start = end;
      if (failed) write.reject(failed[0]);
      else if (acknowledged === undefined) write.reject(waitError);
      else if (acknowledged < wait.replicas) write.reject(shortfall(write.what, wait, acknowledged));
      else write.resolve(outcome.value[end - 1]![1]);
    });
  });
  return acknowledged;
}

function shortfall(what: string, wait: WaitReplicas, acknowledged: number): DelayQError {
  return new DelayQError(
    'STORE_UNAVAILABLE',
    `redis ${what}: written on the master, but ${acknowledged} of the ${wait.replicas} replicas asked for (waitReplicas) acknowledged it within ${wait.timeoutMs} ms; ` +
      'it may be lost if the master fails now: retry (every delayq write is safe to repeat)',
    { waitReplicas: wait.replicas, acknowledged, waitTimeoutMs: wait.timeoutMs },
  );
}

function notSent(what: string, wait: WaitReplicas, acknowledged: number): DelayQError {
  return new DelayQError(
    'STORE_UNAVAILABLE',
    `redis ${what}: not sent: the write before it on this shard reached ${acknowledged} of the ${wait.replicas} replicas asked for (waitReplicas) within ${wait.timeoutMs} ms; ` +
      'retry once the shard takes writes again',
    { waitReplicas: wait.replicas, acknowledged, waitTimeoutMs: wait.timeoutMs, sent: false },
  );
}
