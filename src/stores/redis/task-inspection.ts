/**
 * The Redis store's reads of tasks for operators: one task, listings, and the counters
 * stats reports (the shards' `counts` hashes, which the scripts move with every change of
 * state: `leave` and `save` in lua/includes/codec.lua).
 */
import { cutPage, listedSize } from '../../core/task/list-page.js';
import type { ListFilter, StoreStats } from '../../core/ports/index.js';
import { statsOfCounters } from '../../core/task/counter-deltas.js';
import type { TaskRecord } from '../../core/task/model.js';
import { mapByShard, shardOf } from '../../coordination/router.js';
import { decodeTask, stateOfChar } from './codec.js';
import { MAX_SCRIPT_BATCH } from './script-runner.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import { call } from './plain-commands.js';

/** The members of `delayed` and `reserved` are the task's seq in this many bytes, then its id (seqBytes in lua/includes/patch.lua; ADR 0006). */
const SEQ_BYTES = 7;

export class RedisTaskInspection {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
  ) {}

  async get(id: string): Promise<TaskRecord | null> {
    const body = await call(() => this.client.hget(this.keys.shards[shardOf(id, this.keys.shards.length)]!.pool, id));
    return body === null ? null : decodeTask(id, body).record;
  }

  /**
   * Scans every shard's pool (HSCAN, 1,000 a step) and keeps the first `limit` matches in
   * id order. O(tasks): an operator's tool, not a hot path. Dead and reserved tasks are
   * listed from the shards' own indexes instead (listIndexed).
   */
  async list(filter: ListFilter): Promise<TaskRecord[]> {
        if (filter.state === 'dead' || filter.state === 'reserved') return this.listIndexed(filter, filter.state);
    // The page is a prefix of the matches in id order, so a match past the page of those
    // held can never be in it: trimmed to that page whenever they grow (by count or size).
    let best: TaskRecord[] = [];
    let held = 0;
    const consider = (record: TaskRecord): void => {
      if (filter.afterId !== undefined && record.id <= filter.afterId) return;
      if (filter.topic !== undefined && record.topic !== filter.topic) return;
      if (filter.state !== undefined && record.state !== filter.state) return;
      best.push(record);
      if (filter.maxSize !== undefined) held += listedSize(record);
      if (best.length > filter.limit * 2 + 1_000 || (filter.maxSize !== undefined && held > filter.maxSize * 2)) {
        best = cutPage(sortById(best), filter.limit, filter.maxSize);
        held = filter.maxSize === undefined ? 0 : best.reduce((sum, r) => sum + listedSize(r), 0);
      }
    };
    for (const shard of this.keys.shards) {
      let cursor = '0';
      do {
        const [next, flat] = await call(() => this.client.hscan(shard.pool, cursor, 'COUNT', 1_000));
        for (let i = 0; i + 1 < flat.length; i += 2) consider(decodeTask(flat[i]!, flat[i + 1]!).record);
        cursor = next;
      } while (cursor !== '0');
    }
    return cutPage(sortById(best), filter.limit, filter.maxSize);
  }

  /**
   * Dead letters and reservations are usually a few among many, and every shard indexes
   * them (its `dead` and `reserved` ZSETs): their ids come from there, and only the bodies
   * of the page are read, a chunk at a time while a topic filter leaves it short. O(tasks
   * in that state), where the scan of the pools is O(all tasks): 20 dead letters among
   * 1,000,000 tasks took seconds that way.
   */
  private async listIndexed(filter: ListFilter, state: 'dead' | 'reserved'): Promise<TaskRecord[]> {
    const perShard = await Promise.all(
      this.keys.shards.map(async (shard) =>
        state === 'dead'
          ? call(() => this.client.zrange(shard.dead, 0, -1))
          : // Members are a 7-byte seq then the id: read as bytes, the seq may not be UTF-8.
            (await call(() => this.client.zrangeBuffer(shard.reserved, 0, -1))).map((member) => member.subarray(SEQ_BYTES).toString()),
      ),
    );
    const after = filter.afterId;
    const ids = perShard
      .flat()
      .filter((id) => after === undefined || id > after)
      .sort(compareIds);
    const out: TaskRecord[] = [];
    // With a byte bound, 100 bodies at a time: the memory of a read is one such chunk past it.
    const chunkSize = filter.maxSize === undefined ? Math.max(filter.limit, 100) : 100;
    let size = 0;
    const full = (): boolean => out.length >= filter.limit || (filter.maxSize !== undefined && size > filter.maxSize);
    for (let from = 0; from < ids.length && !full(); from += chunkSize) {
      const chunk = ids.slice(from, from + chunkSize);
      const bodies = await mapByShard(chunk, this.keys.shards.length, MAX_SCRIPT_BATCH, (shard, group) => call(() => this.client.hmget(this.keys.shards[shard]!.pool, ...group)));
      chunk.forEach((id, i) => {
        const body = bodies[i];
        if (body === null || body === undefined || full()) return;
        // The body decides: the index and the pool change in the same script, but a task
        // may change state between the two reads here.
        const record = decodeTask(id, body).record;
        if (record.state === state && (filter.topic === undefined || record.topic === filter.topic)) {
          out.push(record);
          size += listedSize(record);
        }
      });
    }
    return out;
  }

  async stats(): Promise<StoreStats> {
    const all = await Promise.all(this.keys.shards.map((shard) => call(() => this.client.hgetall(shard.counts))));
    // A field is the state's character, then the topic (keys.ts `counts`).
    return statsOfCounters(all.flatMap((counts) => Object.entries(counts).map(([field, n]) => ({ topic: field.slice(1), state: stateOfChar(field.charAt(0)), n: Number(n) }))));
  }
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortById(records: TaskRecord[]): TaskRecord[] {
  return records.sort((a, b) => compareIds(a.id, b.id));
}
