import { randomBytes } from 'node:crypto';

/**
 * 64 id-safe characters in ASCII order, so that fixed-width fields written with them sort
 * the same way as the numbers they encode. No '-': an id that starts with one reads as an
 * option to a shell command (`delayq get -0Kx...`), and the time field's first character is
 * the alphabet's first for the next few thousand years.
 */
export const SORTABLE_ALPHABET = '0123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

function encodeFixed(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = SORTABLE_ALPHABET[rest % 64] + out;
    rest = Math.floor(rest / 64);
  }
  return out;
}

function encodeVariable(value: number): string {
  let out = '';
  let rest = value;
  do {
    out = SORTABLE_ALPHABET[rest % 64] + out;
    rest = Math.floor(rest / 64);
  } while (rest > 0);
  return out;
}

/**
 * Task ids for callers that give none, 17 to 19 characters: the creation time in ms (8
 * characters, so ids sort roughly by age), a per-process random part (48 bits, 8 characters)
 * and a counter. Unique within a process by the counter and across processes by the random
 * part, without a random draw per id. Short on purpose: a store keeps each id more than once
 * (the Redis store keeps it in the job pool and in a bucket), so every character counts
 * twice per pending task.
 */
export function createIdGenerator(now: () => number): () => string {
  const processPart = encodeFixed(randomBytes(6).readUIntBE(0, 6), 8);
  let counter = 0;
  let lastMs = -1;
  let prefix = '';
  return () => {
    const ms = now();
    // One prefix per millisecond: ids of a batch share it instead of re-encoding the time.
    if (ms !== lastMs) {
      lastMs = ms;
      prefix = encodeFixed(Math.max(0, Math.floor(ms)), 8) + processPart;
    }
    return prefix + encodeVariable(counter++);
  };
}
