/** The store port's topic pause role: which topics deliver nothing (issue 36, ADR 0040). */

/** The paused topics, and a token that moves with every change of the set. */
export interface PausedTopics {
  /** Opaque; equal tokens from one store mean an unchanged set. */
  readonly version: string;
  /** In ascending order. */
  readonly topics: readonly string[];
}

/**
 * Paused topics: a small set, durable as tasks are, rarely written. Every engine process
 * sharing the store reads it when it starts and re-reads it whenever `version` moved,
 * checking at most every second (ADR 0040), so a pause set through one process holds in
 * every other one within that delay. The store only keeps the set: holding deliveries back
 * is the engine's. A store several processes share keeps `version` in the backing, moved in
 * the same atomic write as the set; a store one process owns may count it in memory.
 */
export interface TopicPauseStore {
  /** Pauses (`paused` true) or resumes `topic`; true if that changed the set (and moved the version). */
  setTopicPaused(topic: string, paused: boolean): Promise<boolean>;
  /** The set and its version. */
  pausedTopics(): Promise<PausedTopics>;
}
