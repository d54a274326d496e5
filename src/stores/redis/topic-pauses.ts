/**
 * The Redis store's paused topics (ADR 0040): fields of one hash (keys.ts `paused`, topic ->
 * "1") and a counter (keys.ts `pausedVersion`), both in the meta slot. A write changes the
 * hash, then moves the counter (one MULTI, then WAIT under waitReplicas), and a read takes both in one MULTI: a reader never sees a version
 * newer than its set. Plain commands, no script: the counter moves with every write, also
 * one that changed nothing (a needless re-read by the others, never a missed one).
 */
import type { PausedTopics } from '../../core/ports/index.js';
import type { TopicPausePart } from '../shared/record-roles.js';
import type { RedisClient } from './connection.js';
import { call } from './plain-commands.js';
import { execAndWait, waitSetting } from './replication.js';

export class RedisTopicPauses implements TopicPausePart {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: { readonly paused: string; readonly pausedVersion: string },
  ) {}

  async set(topic: string, paused: boolean): Promise<boolean> {
    const { paused: key, pausedVersion } = this.keys;
    const multi = this.client.multi();
    if (paused) multi.hsetnx(key, topic, '1');
    else multi.hdel(key, topic);
    const replies = await call(() => multi.incr(pausedVersion).exec());
    const wait = waitSetting(this.client);
    // WAIT covers every write this connection sent before it: the MULTI above.
    if (wait !== undefined) await call(() => execAndWait(this.client, wait, `pause ${key}`, pausedVersion, (pipeline) => pipeline.exists(pausedVersion)));
    return Number(firstReply(replies)) > 0;
  }

  async read(): Promise<PausedTopics> {
    const replies = await call(() => this.client.multi().get(this.keys.pausedVersion).hkeys(this.keys.paused).exec());
    const [versionReply, topicsReply] = (replies ?? []) as [Error | null, unknown][];
    if (versionReply?.[0]) throw versionReply[0];
    if (topicsReply?.[0]) throw topicsReply[0];
    const version = (versionReply?.[1] as string | null | undefined) ?? '0';
    return { version, topics: [...((topicsReply?.[1] as string[] | undefined) ?? [])].sort() };
  }
}

/** The hash command's reply: the first of an EXEC's [[error, reply], ...]. */
function firstReply(replies: unknown): unknown {
  if (!Array.isArray(replies) || replies.length === 0) throw new Error('redis: the pause write was discarded');
  const first: unknown = replies[0];
  const [error, reply] = first as [Error | null, unknown];
  if (error) throw error;
  return reply;
}
