/**
 * A run of parked seqs, packed into one BLOB of parked_runs (see parking.ts): the first
 * seq, then each seq as the difference from the one before, all as LEB128 varints with
 * zigzag signs. The seqs a transaction parks in one bucket grow by small steps, so a run
 * costs one or two bytes a task, not the eight of an INTEGER column.
 *
 * Numbers are JavaScript integers up to 2^53 (SQLite rowids that large do not occur: seq
 * grows by one a task), so the arithmetic is by division, not by 32-bit bitwise operators.
 */

/** Bytes one varint takes at most: 2^53 needs 8 groups of 7 bits. */
const MAX_VARINT_BYTES = 8;

export function encodeSeqs(seqs: readonly number[]): Buffer {
  const out = Buffer.allocUnsafe(seqs.length * MAX_VARINT_BYTES);
  let at = 0;
  let previous = 0;
  for (const seq of seqs) {
    const delta = seq - previous;
    previous = seq;
    let value = delta >= 0 ? delta * 2 : -delta * 2 - 1;
    while (value >= 0x80) {
      out[at++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    out[at++] = value;
  }
  return out.subarray(0, at);
}

export function decodeSeqs(packed: Uint8Array): number[] {
  const seqs: number[] = [];
  let previous = 0;
  let at = 0;
  while (at < packed.length) {
    let value = 0;
    let scale = 1;
    let byte: number;
    do {
      if (at >= packed.length) throw new Error('truncated seq run');
      byte = packed[at++]!;
      value += (byte & 0x7f) * scale;
      scale *= 0x80;
    } while (byte & 0x80);
    previous += value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    seqs.push(previous);
  }
  return seqs;
}
