/**
 * The packed task body, TS side (the Lua side is lua/includes/codec.lua; keep them in step):
 *
 *   s,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt,updatedAt,reservedUntil,seq,receipt,topicLen,errLen|topic err payload
 *
 * Integers in base 36, the backoff policy as "baseMs:factor:maxMs:jitter", empty fields for
 * null. A pending task with a 64-byte payload costs ~60 bytes of header instead of a
 * hash per task with field names (BullMQ), which is most of the memory saving.
 */
import type { BackoffPolicy, TaskRecord, TaskState } from '../../core/task/model.js';

const STATES: Readonly<Record<string, TaskState>> = { p: 'pending', r: 'reserved', c: 'completed', x: 'cancelled', d: 'dead' };
export const STATE_CHARS: Readonly<Record<TaskState, string>> = {
  pending: 'p',
  reserved: 'r',
  completed: 'c',
  cancelled: 'x',
  dead: 'd',
};

export function stateOfChar(char: string): TaskState | undefined {
  return STATES[char];
}

export function encodeBackoff(policy: BackoffPolicy): string {
  return `${policy.baseMs}:${policy.factor}:${policy.maxMs}:${policy.jitter}`;
}

function decodeBackoff(text: string): BackoffPolicy {
  const [baseMs, factor, maxMs, jitter] = text.split(':').map(Number);
  return { baseMs: baseMs ?? 0, factor: factor ?? 1, maxMs: maxMs ?? 0, jitter: jitter ?? 0 };
}

const int = (text: string | undefined): number => parseInt(text ?? '0', 36);

export interface DecodedTask {
  readonly record: TaskRecord;
  readonly seq: number;
}

export function decodeTask(id: string, body: string): DecodedTask {
  const bar = body.indexOf('|');
  const f = body.slice(0, bar).split(',');
  const topicLen = int(f[11]);
  const topic = body.slice(bar + 1, bar + 1 + topicLen);
  const rest = body.slice(bar + 1 + topicLen);
  let payload = rest;
  let lastError: string | null = null;
  if (f[12] !== undefined && f[12] !== '') {
    // errLen counts bytes (Lua's #), and an error text may hold any unicode.
    const bytes = Buffer.from(rest, 'utf8');
    const errLen = int(f[12]);
    lastError = bytes.subarray(0, errLen).toString('utf8');
    payload = bytes.subarray(errLen).toString('utf8');
  }
  const record: TaskRecord = {
    id,
    topic,
    payload,
    state: STATES[f[0] ?? ''] ?? 'pending',
    attempts: int(f[1]),
    runAt: int(f[2]),
    maxAttempts: int(f[3]),
    ttrMs: int(f[4]),
    backoff: decodeBackoff(f[5] ?? ''),
    createdAt: int(f[6]),
    updatedAt: int(f[7]),
    reservedUntil: f[8] === undefined || f[8] === '' ? null : int(f[8]),
    receipt: f[10] === undefined || f[10] === '' ? null : f[10],
    lastError,
  };
  return { record, seq: int(f[9]) };
}
