/** The memory store's paused topics: a Set, and a counter of its changes for the version. */
import type { PausedTopics } from '../../core/ports/index.js';
import type { TopicPausePart } from '../shared/record-roles.js';

export class MemoryTopicPauses implements TopicPausePart {
  private readonly paused = new Set<string>();
  private changes = 0;

  set(topic: string, paused: boolean): boolean {
    const changed = paused ? !this.paused.has(topic) : this.paused.has(topic);
    if (!changed) return false;
    if (paused) this.paused.add(topic);
    else this.paused.delete(topic);
    this.changes++;
    return true;
  }

  read(): PausedTopics {
    return { version: String(this.changes), topics: [...this.paused].sort() };
  }
}
