/**
 * The Redis store's topic limits (ADR 0043). The limits: fields of one hash in the meta slot
 * (keys.ts `limits`, topic -> JSON) and a counter, written and read as the paused topics
 * are (topic-pauses.ts). The state they govern: per topic, a token bucket and a ZSET of
 * slots under the topic's own hash tag, changed only by flow-admit.lua and flow-bind.lua,
 * so every process's admissions are one atomic step on one node. That state is not waited
 * for under waitReplicas: a failover that loses it starts the topic with a full bucket and
 * no slots held, at most one burst and one concurrency more for a moment.
 */
import { dict, own } from '../../core/dict.js';
import { decodeTopicLimits, encodeTopicLimits, type LimitedTopics, type TopicLimits } from '../../core/flow/limits.js';
import type { FlowAdmission, FlowAdmissionRequest, FlowBinding, FlowLease } from '../../core/ports/index.js';
import type { FlowStatePart, TopicLimitPart } from '../shared/record-roles.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import { call } from './plain-commands.js';
import { execAndWait, waitSetting } from './replication.js';
import { asArray, num, run, type Arg } from './script-runner.js';

export class RedisTopicLimits implements TopicLimitPart {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Pick<Keyspace, 'limits' | 'limitsVersion'>,
  ) {}

  async set(topic: string, limits: TopicLimits | null): Promise<boolean> {
    const { limits: key, limitsVersion } = this.keys;
    const encoded = limits === null ? null : encodeTopicLimits(limits);
    const multi = this.client.multi().hget(key, topic);
    if (encoded === null) multi.hdel(key, topic);
    else multi.hset(key, topic, encoded);
    const replies = await call(() => multi.incr(limitsVersion).exec());
    if (replies === null) throw new Error('redis: the limits write was discarded');
    const [[error, before]] = replies as [[Error | null, unknown]];
    if (error) throw error;
    const wait = waitSetting(this.client);
    if (wait !== undefined) await call(() => execAndWait(this.client, wait, `limits ${key}`, limitsVersion, (pipeline) => pipeline.exists(limitsVersion)));
    return (before ?? null) !== encoded;
  }

  async read(): Promise<LimitedTopics> {
    const replies = await call(() => this.client.multi().get(this.keys.limitsVersion).hgetall(this.keys.limits).exec());
    const [versionReply, limitsReply] = (replies ?? []) as [Error | null, unknown][];
    if (versionReply?.[0]) throw versionReply[0];
    if (limitsReply?.[0]) throw limitsReply[0];
    const stored = (limitsReply?.[1] as Record<string, string> | undefined) ?? {};
    const limits = dict<TopicLimits>();
    for (const topic of Object.keys(stored).sort()) limits[topic] = decodeTopicLimits(own(stored, topic)!);
    return { version: (versionReply?.[1] as string | null | undefined) ?? '0', limits };
  }
}

export class RedisFlowState implements FlowStatePart {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Pick<Keyspace, 'flowKeys'>,
  ) {}

  async admit({ topic, limits, want, holder, holdUntil, now }: FlowAdmissionRequest): Promise<FlowAdmission> {
    const { bucket, slots } = this.keys.flowKeys(topic);
    const args: Arg[] = [now, want, holder, holdUntil, limits.rate ?? '', limits.periodMs, limits.burst, limits.concurrency ?? ''];
    const reply = asArray(await run(this.client, 'flow-admit', [bucket, slots], args));
    return { granted: num(reply[0]), retryAt: num(reply[1]) };
  }

  async bind({ topic, limits, holder, unused, leases, now }: FlowBinding): Promise<void> {
    const held = limits.concurrency === null ? 0 : unused + leases.length;
    // With a rate the bucket is always brought to now: the admission's tokens are held until this call.
    if (held === 0 && limits.rate === null) return;
    const { bucket, slots } = this.keys.flowKeys(topic);
    const args: Arg[] = [now, holder, held, unused, limits.rate ?? '', limits.periodMs, limits.burst];
    for (const lease of leases) args.push(lease.key, lease.until);
    await run(this.client, 'flow-bind', [bucket, slots], args);
  }

  async release(topic: string, ids: readonly string[]): Promise<void> {
    await call(() => this.client.zrem(this.keys.flowKeys(topic).slots, ...ids));
  }

  async hold(topic: string, leases: readonly FlowLease[]): Promise<void> {
    const args: Arg[] = [];
    for (const lease of leases) args.push(lease.key, lease.until);
    await run(this.client, 'flow-hold', [this.keys.flowKeys(topic).slots], args);
  }
}
