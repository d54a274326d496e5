/**
 * The packed task body, TS side (the Lua side is lua/includes/codec.lua; keep them in step):
 *
 *   s,attempts,runAt,maxAttempts,ttrMs,backoff,createdAt,updatedAt,reservedUntil,seq,receipt,topic,errLen[:histLen:count][,url[,trace[,priority]]]|err history payload
 *
 * The attempt history (core/task/history.ts, ADR 0041) sits between the error text and the
 * payload: `count` entries, oldest first, each `<len>:<attempt>,<startedAt>,<durationMs>,<outcome>,<error>`
 * (len: the entry's bytes after its ':'), histLen bytes in all. A body written before
 * history was kept has no ':' in field 13 and reads with an empty history. The scripts
 * append entries (appendAttempt in lua/includes/patch.lua); this side only reads them.
 *
 * The url field is there only for a task with its own push url (escapeUrl: ',' '|' '%'
 * percent-encoded), so a task without one takes not a byte more. The trace field (the
 * scheduling call's trace context, escaped the same way) follows it only for a task
 * scheduled with one, after an empty url field when the task has no url.
 *
 * Integers in base 36, the backoff policy as "baseMs:factor:maxMs:jitter" (the ms in base
 * 36; empty for core's DEFAULT_BACKOFF), empty fields for null and for an updatedAt equal to createdAt. A pending task with
 * a 64-byte payload takes ~120 bytes, in one hash field of its shard's pool, instead of a
 * hash per task with field names and options as JSON (BullMQ).
 */
import { own } from '../../core/dict.js';
import { DEFAULT_BACKOFF } from '../../core/task/backoff.js';
import type { AttemptEntry } from '../../core/task/history.js';
import { priorityOf } from '../shared/task-rows.js';
import type { BackoffPolicy, NewTaskRecord, TaskRecord, TaskState } from '../../core/task/model.js';

const STATES: Readonly<Record<string, TaskState>> = { p: 'pending', r: 'reserved', c: 'completed', x: 'cancelled', d: 'dead' };

export function stateOfChar(char: string): TaskState | undefined {
  return own(STATES, char);
}

const b36 = (n: number): string => n.toString(36);
const int = (text: string | undefined): number => parseInt(text ?? '0', 36);

/** The default policy is stored as '' (most tasks use it: 14 bytes less per task). */
export function encodeBackoff(policy: BackoffPolicy): string {
  const d = DEFAULT_BACKOFF;
  if (policy.baseMs === d.baseMs && policy.factor === d.factor && policy.maxMs === d.maxMs && policy.jitter === d.jitter) return '';
  return `${b36(policy.baseMs)}:${policy.factor}:${b36(policy.maxMs)}:${policy.jitter}`;
}

function decodeBackoff(text: string): BackoffPolicy {
  if (text === '') return DEFAULT_BACKOFF;
  const [baseMs, factor, maxMs, jitter] = text.split(':');
  return { baseMs: int(baseMs), factor: Number(factor ?? 1), maxMs: int(maxMs), jitter: Number(jitter ?? 0) };
}

/** The body of a new pending task (attempts 0, created now). */
export function encodeNewTask(task: NewTaskRecord, seq: number, now: number): string {
  return `p,0,${b36(task.runAt)},${b36(task.maxAttempts)},${b36(task.ttrMs)},${encodeBackoff(task.backoff)},${b36(now)},,,${b36(seq)},,${task.topic},${optionalFields(task)}|${task.payload}`;
}

/**
 * Fields 14 to 16 (url, trace, priority), each only when it or one after it is there, so a
 * task without them takes not a byte more. The priority is decimal (-100..100), and there
 * only when it is not 0: the scripts read it by the body having 16 fields (patch.lua priorityOf).
 */
function optionalFields(task: NewTaskRecord): string {
  const priority = task.priority === undefined || task.priority === 0 ? '' : `,${task.priority}`;
  const trace = task.trace === undefined ? (priority === '' ? '' : ',') : `,${escapeUrl(task.trace)}`;
  const url = task.url === undefined ? (trace === '' ? '' : ',') : `,${escapeUrl(task.url)}`;
  return `${url}${trace}${priority}`;
}

/** A url as the packed body's field 14 holds it: no ',' or '|' (the body's separators), '%' escaped so it reads back exactly. */
export function escapeUrl(url: string): string {
  return url.replace(/[%,|]/g, (c) => (c === '%' ? '%25' : c === ',' ? '%2C' : '%7C'));
}

export function unescapeUrl(field: string): string {
  return field.replace(/%(25|2C|7C)/g, (_, hex: string) => (hex === '25' ? '%' : hex === '2C' ? ',' : '|'));
}

export interface DecodedTask {
  readonly record: TaskRecord;
  readonly seq: number;
}

export function decodeTask(id: string, body: string): DecodedTask {
  const bar = body.indexOf('|');
  const f = body.slice(0, bar).split(',');
  let payload = body.slice(bar + 1);
  let lastError: string | null = null;
  let history: AttemptEntry[] = [];
  if (f[12] !== undefined && f[12] !== '') {
    // Lengths count bytes (Lua's #), and an error text may hold any unicode.
    const [e = '', h = ''] = f[12].split(':');
    const errLen = e === '' ? 0 : int(e);
    const histLen = h === '' ? 0 : int(h);
    const bytes = Buffer.from(payload, 'utf8');
    if (e !== '') lastError = bytes.subarray(0, errLen).toString('utf8');
    if (histLen > 0) history = decodeHistory(bytes.subarray(errLen, errLen + histLen));
    payload = bytes.subarray(errLen + histLen).toString('utf8');
  }
  const createdAt = int(f[6]);
  const record: TaskRecord = {
    id,
    topic: f[11] ?? '',
    payload,
    state: own(STATES, f[0] ?? '') ?? 'pending',
    attempts: int(f[1]),
    runAt: int(f[2]),
    maxAttempts: int(f[3]),
    ttrMs: int(f[4]),
    backoff: decodeBackoff(f[5] ?? ''),
    createdAt,
    updatedAt: f[7] === undefined || f[7] === '' ? createdAt : int(f[7]),
    reservedUntil: f[8] === undefined || f[8] === '' ? null : int(f[8]),
    // A completed task keeps the receipt that completed it (ack.lua); only a reservation's is shown.
    receipt: f[0] !== 'r' || f[10] === undefined || f[10] === '' ? null : f[10],
    lastError,
    url: f[13] === undefined || f[13] === '' ? null : unescapeUrl(f[13]),
    trace: f[14] === undefined || f[14] === '' ? null : unescapeUrl(f[14]),
    priority: priorityOf(f[15]),
    history,
  };
  return { record, seq: int(f[9]) };
}

const COLON = 0x3a;

/** The history's entries; one this version cannot read ends the list (a body is never refused for it). */
export function decodeHistory(bytes: Buffer): AttemptEntry[] {
  const entries: AttemptEntry[] = [];
  let at = 0;
  while (at < bytes.length) {
    const colon = bytes.indexOf(COLON, at);
    if (colon < 0) break;
    const len = int(bytes.subarray(at, colon).toString('latin1'));
    if (!Number.isSafeInteger(len) || colon + 1 + len > bytes.length) break;
    const text = bytes.subarray(colon + 1, colon + 1 + len).toString('utf8');
    at = colon + 1 + len;
    const parts = text.split(',');
    if (parts.length < 5) break;
    const error = parts.slice(4).join(',');
    entries.push({ attempt: int(parts[0]), startedAt: int(parts[1]), durationMs: int(parts[2]), outcome: parts[3] ?? '', error: error === '' ? null : error });
  }
  return entries;
}
