/**
 * Every Redis key and channel of the store, built here and nowhere else.
 *
 * A namespace (the `prefix`) is split into N shards. All keys of one shard share one hash
 * tag, so every script runs on one shard's keys in one slot; different shards have
 * different tags, so a Redis Cluster spreads one queue over all its masters. The tags are
 * chosen so that shard i's slot falls in the i-th of N equal slices of the 16384 slots:
 * `redis-cli --cluster create` hands each master a contiguous, equal slice, so the shards
 * spread evenly instead of by luck of the hash.
 *
 *   <prefix>:{<prefix>/<i>/<k>}:pool       HASH  id -> packed task body (codec.ts)
 *   <prefix>:{...}:delayed                 ZSET  pending tasks, score runAt, member seq7|id
 *   <prefix>:{...}:reserved                ZSET  reservations, score reservedUntil, member seq7|id
 *   <prefix>:{...}:dead                    ZSET  dead tasks, score updatedAt, member id
 *   <prefix>:{...}:done                    LIST  completed + cancelled ids in finishing order (purge)
 *   <prefix>:{...}:counts                  HASH  <state char><topic> -> count (stats in O(topics))
 *   <prefix>:{...}:lease                   STRING owner token of the shard (multi-process)
 *   <prefix>:{...}:fence                   STRING fencing counter of the lease
 *   <prefix>:{...}:ready:<topic>           LIST  due ids of priority 0 waiting for any process's consumers
 *   <prefix>:{...}:readyp:<topic>          ZSET  due ids of other priorities, score rankedScore (includes/patch.lua, ADR 0057)
 *   <prefix>:{...}:parkfrom                STRING the first park bucket that may hold parked tasks
 *   <prefix>:{...}:parked                  ZSET  park buckets that have a list, score = member = bucket
 *   <prefix>:{...}:park:<bucket>           LIST  ids of far-future tasks parked there (parking.ts)
 *   <prefix>:{...}:parkedh                 HASH  parked pending tasks per hour of runAt: <hour> and <hour>:<topic>
 *                                                -> count, hour = floor(runAt / 3600000); `from` = first park
 *                                                bucket counted (includes/parked.lua, dueHistogram)
 *   <prefix>:{...}:took:<nonce>            STRING ids a reserve-ready call reserved, for ~10 s (reserve-ready.lua)
 *   <prefix>:{...}:probe                   STRING a write that tells whether a shard takes writes again, for 60 s (shard-health.ts)
 *   <prefix>:{<prefix>/meta}:meta          HASH  shards, format version, global seq counter
 *   <prefix>:{<prefix>/meta}:members       ZSET  live processes, score = heartbeat expiry
 *   <prefix>:{<prefix>/meta}:joined        ZSET  live processes, score = first heartbeat (their rank for the shares)
 *   <prefix>:{<prefix>/meta}:push          HASH  topic -> push subscription JSON (push-subscription-codec.ts)
 *   <prefix>:{<prefix>/meta}:schedules     HASH  schedule id -> recurring schedule JSON (schedule-codec.ts)
 *   <prefix>:{<prefix>/meta}:schedules-version  STRING  counter of schedule changes (schedulesVersion)
 *   <prefix>:{<prefix>/meta}:paused        HASH  paused topic -> ms the pause was written (topic-pauses.ts, ADR 0040)
 *   <prefix>:{<prefix>/meta}:paused-version  STRING  counter of writes of `paused` (pausedTopics)
 *   <prefix>:{<prefix>/meta}:limits        HASH  limited topic -> its limits as JSON (topic-limits.ts, ADR 0043)
 *   <prefix>:{<prefix>/meta}:limits-version  STRING  counter of writes of `limits` (topicLimits)
 *   <prefix>:{<prefix>/events}:events      STREAM lifecycle events, an entry a batch: n = events, e = their JSON array (event-log.ts)
 *   <prefix>:{<prefix>/events}:events-count  STRING events the stream holds (trimmed to the newest `retain` by events-append.lua)
 *   <prefix>:{<prefix>/flow/<topic>}:bucket  HASH  the topic's token bucket: tokens, at (flow-admit.lua); expires once full
 *   <prefix>:{<prefix>/flow/<topic>}:slots   ZSET  the topic's deliveries in flight and admissions, score = held until
 *
 * Pub/sub channels (not keys, so outside any slot):
 *   <prefix>:ready:<topic>                 "shard" when tasks of the topic became ready
 *   <prefix>:timers                        near-window timers for the owners of their shards
 */
import { keySlot } from './slot.js';

export const SLOTS = 16384;

/** The one place a hash tag is written. */
function hashTag(prefix: string, name: string): string {
  return `${prefix}:{${prefix}/${name}}`;
}

/** The tag name of shard i: the first salt k whose slot lies in the shard's slice. */
function shardTagName(prefix: string, shard: number, shards: number): string {
  const low = Math.floor((shard * SLOTS) / shards);
  const high = Math.floor(((shard + 1) * SLOTS) / shards);
  for (let k = 0; ; k++) {
    const name = `${shard}/${k}`;
    const slot = keySlot(hashTag(prefix, name));
    if (slot >= low && slot < high) return name;
  }
}

export interface ShardKeys {
  readonly index: number;
  readonly pool: string;
  readonly delayed: string;
  readonly reserved: string;
  readonly dead: string;
  readonly done: string;
  readonly counts: string;
  readonly lease: string;
  readonly fence: string;
  /** The first park bucket that may hold parked tasks (parking.ts). */
  readonly parkFrom: string;
  /** Written to learn whether an unavailable shard takes writes again (shard-health.ts). */
  readonly probe: string;
  /** The park buckets that have a list. */
  readonly parked: string;
  /** Parked pending tasks counted per hour of runAt, all topics and per topic (includes/parked.lua). */
  readonly parkedCounts: string;
  /** The ready list of one topic (shared dispatch): its tasks of priority 0. */
  ready(topic: string): string;
  /** The ranked ready set of one topic: its tasks of other priorities (ADR 0057). */
  readyRanked(topic: string): string;
  /** The list of ids parked in one bucket of far-future time. */
  park(bucket: number): string;
  /** What the reserve-ready call with this receipt nonce reserved, kept a few seconds for a resend of it. */
  reserveMemo(nonce: string): string;
}

export interface Keyspace {
  readonly prefix: string;
  readonly meta: string;
  readonly members: string;
  /** When each live process joined (its first heartbeat), in the meta slot with `members` (heartbeat.lua writes both). */
  readonly joined: string;
  /**
   * Push subscriptions, one field per topic. One key for the namespace, in the meta slot
   * like the other namespace-wide keys: a few small fields, read whole by every process.
   */
  readonly push: string;
  /** Recurring schedules, one field per schedule id, in the meta slot like `push`. */
  readonly schedules: string;
  /** A counter bumped with every schedule change other processes must re-read (RecurringScheduleStore.schedulesVersion). */
  readonly schedulesVersion: string;
  /** Paused topics, one field per topic, in the meta slot with its counter (one MULTI writes both). */
  readonly paused: string;
  /** A counter moved with every write of `paused` (TopicPauseStore.pausedTopics). */
  readonly pausedVersion: string;
  /** Limited topics, one field per topic (its limits as JSON), in the meta slot with its counter. */
  readonly limits: string;
  /** A counter moved with every write of `limits` (TopicLimitStore.topicLimits). */
  readonly limitsVersion: string;
  /** The lifecycle events' stream, under a hash tag of its own (event-log.ts). */
  readonly events: string;
  /** How many events the stream holds, in its slot. */
  readonly eventsCount: string;
  /** A topic's token bucket and its slots in flight, both under the topic's own hash tag (one script writes both). */
  flowKeys(topic: string): { readonly bucket: string; readonly slots: string };
  /** Pub/sub: near-window timers scheduled by one process into shards another owns. */
  readonly timerChannel: string;
  readonly shards: readonly ShardKeys[];
  /** Pub/sub: the shard index when tasks of `topic` became ready there (wakes consumers anywhere). */
  readyChannel(topic: string): string;
}

export function buildKeyspace(prefix: string, shards: number): Keyspace {
  const shardKeys = Array.from({ length: shards }, (_, index): ShardKeys => {
    const base = hashTag(prefix, shardTagName(prefix, index, shards));
    return {
      index,
      pool: `${base}:pool`,
      delayed: `${base}:delayed`,
      reserved: `${base}:reserved`,
      dead: `${base}:dead`,
      done: `${base}:done`,
      counts: `${base}:counts`,
      lease: `${base}:lease`,
      fence: `${base}:fence`,
      parkFrom: `${base}:parkfrom`,
      probe: `${base}:probe`,
      parked: `${base}:parked`,
      parkedCounts: `${base}:parkedh`,
      ready: (topic) => `${base}:ready:${topic}`,
      readyRanked: (topic) => `${base}:readyp:${topic}`,
      park: (bucket) => `${base}:park:${bucket}`,
      reserveMemo: (nonce) => `${base}:took:${nonce}`,
    };
  });
  return {
    prefix,
    meta: `${hashTag(prefix, 'meta')}:meta`,
    members: `${hashTag(prefix, 'meta')}:members`,
    joined: `${hashTag(prefix, 'meta')}:joined`,
    push: `${hashTag(prefix, 'meta')}:push`,
    schedules: `${hashTag(prefix, 'meta')}:schedules`,
    schedulesVersion: `${hashTag(prefix, 'meta')}:schedules-version`,
    paused: `${hashTag(prefix, 'meta')}:paused`,
    pausedVersion: `${hashTag(prefix, 'meta')}:paused-version`,
    limits: `${hashTag(prefix, 'meta')}:limits`,
    limitsVersion: `${hashTag(prefix, 'meta')}:limits-version`,
    events: `${hashTag(prefix, 'events')}:events`,
    eventsCount: `${hashTag(prefix, 'events')}:events-count`,
    flowKeys: (topic) => ({ bucket: `${hashTag(prefix, `flow/${topic}`)}:bucket`, slots: `${hashTag(prefix, `flow/${topic}`)}:slots` }),
    timerChannel: `${prefix}:timers`,
    shards: shardKeys,
    readyChannel: (topic) => `${prefix}:ready:${topic}`,
  };
}
