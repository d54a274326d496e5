/** The memory store's topic limits: a Map, and a counter of its changes for the version. */
import { dict } from '../../core/dict.js';
import { encodeTopicLimits, type LimitedTopics, type TopicLimits } from '../../core/flow/limits.js';
import type { TopicLimitPart } from '../shared/record-roles.js';

export class MemoryTopicLimits implements TopicLimitPart {
  private readonly limits = new Map<string, TopicLimits>();
  private changes = 0;

  set(topic: string, limits: TopicLimits | null): boolean {
    const before = this.limits.get(topic);
    const changed = limits === null ? before !== undefined : before === undefined || encodeTopicLimits(before) !== encodeTopicLimits(limits);
    if (!changed) return false;
    if (limits === null) this.limits.delete(topic);
    else this.limits.set(topic, limits);
    this.changes++;
    return true;
  }

  read(): LimitedTopics {
    const limits = dict<TopicLimits>();
    for (const topic of [...this.limits.keys()].sort()) limits[topic] = this.limits.get(topic)!;
    return { version: String(this.changes), limits };
  }
}
