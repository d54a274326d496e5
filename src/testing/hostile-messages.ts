/**
 * Messages no delayq process sends, for the shared-store suite's message fuzzing
 * (runSharedConformance): random text and hostile payloads, on the timers channel and a
 * topic's ready channel, as any client of the store could send them (PostgreSQL NOTIFY
 * needs no privilege; any Redis client may PUBLISH). Some are malformed (a store drops and
 * counts them); some are well formed and false: real task ids with times before or long
 * after their runAt, made-up ids, lanes and push lanes, positions at the very beginning.
 * Deterministic for a seed, so a failure can be run again; no fast-check (this module ships
 * in delayq/testing, which depends on nothing but node:test).
 */

/** A small seeded PRNG (mulberry32): numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export type MessageChannel = 'timers' | 'ready';

/** A task the messages may name, with its real due time. */
export interface NamedTask {
  readonly id: string;
  readonly topic: string;
  readonly runAt: number;
}

const NUMBERS = ['-Infinity', 'Infinity', 'NaN', 'abc', '1e400', '-1', '-0', '1.5', '0x10', '9007199254740993', '99999999999999999999', '', ' ', '1_000', '\u0661'];
const JUNK = ['', ' ', '\n', '\n\n', '  \n ', 'null', '{}', '[]', '"x"', '\u00e9\u00e9', '\ud83d\ude00', '\u2028', 'a b c d e', 'x'.repeat(2_000), '\t1\t2'];
const NAMES = ['__proto__', 'constructor', 'toString', '~push:', '~push:x', '~', '..', 'a b', 'a\tb', '\u00e9', 'x'.repeat(300)];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function randomText(random: () => number, max: number): string {
  const alphabet = '0123456789 \n-:.~_abcxyzAZ\u00e9\ud83d';
  let out = '';
  const length = Math.floor(random() * max);
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/**
 * The next hostile message for `channel`. `tasks`: real tasks of the namespace, which
 * well-formed false messages name; `now`: the wall clock.
 */
export function hostileMessage(random: () => number, channel: MessageChannel, tasks: readonly NamedTask[], now: number): string {
  const task = pick(random, tasks);
  const roll = random();
  if (channel === 'timers') {
    if (roll < 0.15) return `${task.id} ${task.topic} ${pick(random, NUMBERS)} ${pick(random, ['1', ...NUMBERS])}`;
    if (roll < 0.3) return `${task.id} ${task.topic} ${task.runAt - 1 - Math.floor(random() * 2_000)} 1`; // early
    if (roll < 0.4) return `${task.id} ${task.topic} ${task.runAt + 1_000 + Math.floor(random() * 50_000)} 1`; // late
    if (roll < 0.45) return `${task.id} ~push:${task.topic} ${now} 1`;
    if (roll < 0.5) return `${task.id} ${task.topic} 0 0`;
    if (roll < 0.55) return Array.from({ length: 500 }, (_, i) => `forged-${i}-${Math.floor(random() * 1e9)} ${pick(random, ['t', '~push:t', task.topic])} ${now + Math.floor(random() * 3_000)} ${i}`).join('\n');
    if (roll < 0.6) return `${pick(random, NAMES)} ${pick(random, NAMES)} ${now} 1`;
    if (roll < 0.65) return `${task.id} ${task.topic} ${now} 1 extra`;
    if (roll < 0.7) return pick(random, JUNK);
    return randomText(random, 200);
  }
  if (roll < 0.2) return `${task.topic} ${pick(random, NUMBERS)} ${pick(random, NUMBERS)}`;
  if (roll < 0.3) return `${task.topic} 0 0`;
  if (roll < 0.4) return `${Math.floor(random() * 40) - 5} ${pick(random, ['owner', 'x', '', 'a b', ...NUMBERS])}`;
  if (roll < 0.5) return `${pick(random, NAMES)}`;
  if (roll < 0.6) return pick(random, JUNK);
  if (roll < 0.65) return `${task.topic} ${now} 1 2`;
  return randomText(random, 200);
}
