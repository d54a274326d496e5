/**
 * Messages from other processes (PostgreSQL NOTIFY, Redis PUBLISH), read as untrusted input:
 * any role that can log in to the database may NOTIFY any channel, and any client of the
 * Redis may PUBLISH. Each message is parsed, its numbers checked finite and in range, its ids
 * and lanes checked against the shapes delayq writes, its lines and bytes bounded; a message
 * that fails any check is dropped whole (a process of ours never sends one), counted per
 * channel and logged at most once a minute per channel (NoticeGuard). Nothing here throws.
 *
 * A message that passes is still only a hint: the store authority decides at each reserve
 * (never early), and the engine places a notice's timer beside the task's own, never in its
 * place (SharedDispatch.onRemoteTimer, `notice`), so a forged message makes delayq look
 * again and nothing more.
 *
 *   timers   "id lane dueAt seq" lines (timer-lines.ts)
 *   ready    PostgreSQL: "lane" or "lane dueAt seq"; Redis: "shard owner" or "shard owner r"
 */
import type { Clock, Logger } from '../core/ports/index.js';
import { shown } from '../core/shown.js';
import type { TimerRef } from '../core/task/model.js';

/** The most lines a timers message may hold (a batch of the default maxBatch, from a peer of an older version). */
export const MAX_NOTICE_LINES = 10_000;
/** The most bytes (UTF-16 units) a message may hold: 10,000 lines of a 256-character id and a 200-character lane. */
export const MAX_NOTICE_LENGTH = 5_000_000;
/** A timers message's line: what an id and a lane may be, as the validators accept them (names, and `~push:` before a topic). */
const NAME = /^[A-Za-z0-9._:-]+$/;
const LANE = /^(?:~push:)?[A-Za-z0-9._:-]+$/;
/** A Redis process's owner token (base64url of 6 random bytes; a little room for others). */
const OWNER = /^[A-Za-z0-9_-]{1,64}$/;
/** Digits of a whole number >= 0 that is a safe integer (checked again as a number). */
const DIGITS = /^[0-9]{1,16}$/;
const WARN_EVERY_MS = 60_000;

/** A message that failed its checks: why, for the log. */
export class BadNotice {
  constructor(readonly reason: string) {}
}

function wholeNumber(text: string | undefined): number | null {
  if (text === undefined || !DIGITS.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Whether `text` is an id or a lane as delayq writes them. */
export const isNoticeName = (text: string): boolean => NAME.test(text);
export const isNoticeLane = (text: string): boolean => LANE.test(text) && text !== '~push:';

/**
 * The run timers of a timers message, every line checked; BadNotice if any line is not one
 * our processes write, or the message is too long.
 */
export function parseTimerNotice(message: string): TimerRef[] | BadNotice {
  if (message.length > MAX_NOTICE_LENGTH) return new BadNotice(`longer than ${MAX_NOTICE_LENGTH} characters`);
  const lines = message.split('\n');
  if (lines.length > MAX_NOTICE_LINES) return new BadNotice(`more than ${MAX_NOTICE_LINES} lines`);
  const refs: TimerRef[] = [];
  for (const line of lines) {
    const fields = line.split(' ');
    if (fields.length !== 4) return new BadNotice('a line is not "id lane dueAt seq"');
    const [id, lane, dueText, seqText] = fields as [string, string, string, string];
    if (!NAME.test(id)) return new BadNotice('an id that is not a name');
    if (!isNoticeLane(lane)) return new BadNotice('a lane that is not a topic or a push lane');
    const dueAt = wholeNumber(dueText);
    const seq = wholeNumber(seqText);
    if (dueAt === null) return new BadNotice('a dueAt that is not a whole number of ms');
    if (seq === null) return new BadNotice('a seq that is not a whole number');
    refs.push({ id, topic: lane, kind: 'run', dueAt, seq, receipt: null });
  }
  return refs;
}

/** A PostgreSQL ready notice: "lane", or "lane dueAt seq" (the earliest position promoted). */
export function parsePgReadyNotice(message: string): { lane: string; from?: { dueAt: number; seq: number } } | BadNotice {
  const fields = message.split(' ');
  const [lane = ''] = fields;
  if (!isNoticeLane(lane) || lane.length > 1_000) return new BadNotice('a lane that is not a topic or a push lane');
  if (fields.length === 1) return { lane };
  const dueAt = wholeNumber(fields[1]);
  const seq = wholeNumber(fields[2]);
  if (fields.length !== 3 || dueAt === null || seq === null) return new BadNotice('not "lane" or "lane dueAt seq" with whole numbers');
  return { lane, from: { dueAt, seq } };
}

/**
 * A Redis ready message: "shard owner", the shard one of the store's, or "shard owner r"
 * when tasks above priority 0 were made ready there (ADR 0057).
 */
export function parseRedisReadyNotice(message: string, shards: number): { shard: number; owner: string; ranked: boolean } | BadNotice {
  const fields = message.split(' ');
  const shard = wholeNumber(fields[0]);
  const owner = fields[1] ?? '';
  const ranked = fields.length === 3 && fields[2] === 'r';
  if ((fields.length !== 2 && !ranked) || shard === null || shard >= shards) return new BadNotice(`not "shard owner" or "shard owner r" with a shard from 0 to ${shards - 1}`);
  if (!OWNER.test(owner)) return new BadNotice('an owner that is not a process token');
  return { shard, owner, ranked };
}

/**
 * The dropped messages of a store, by channel: counted (SharedDispatch.badNotices, the
 * metric delayq_bad_notices_total) and logged at warn at most once a minute per channel,
 * with how many were dropped since the last line, so a flood of them cannot flood the log.
 */
export class NoticeGuard {
  private readonly dropped = new Map<string, number>();
  private readonly warned = new Map<string, { at: number; count: number }>();

  constructor(
    private readonly store: string,
    channels: readonly string[],
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    for (const channel of channels) this.dropped.set(channel, 0);
  }

  drop(channel: string, bad: BadNotice, message: string): void {
    const count = (this.dropped.get(channel) ?? 0) + 1;
    this.dropped.set(channel, count);
    const now = this.clock.now();
    const last = this.warned.get(channel);
    if (last !== undefined && now - last.at < WARN_EVERY_MS) return;
    this.warned.set(channel, { at: now, count });
    const since = last === undefined ? 1 : count - last.count;
    this.logger.warn(
      { channel, reason: bad.reason, message: shown(message), dropped: since },
      `${this.store}: dropped ${since === 1 ? 'a message' : `${since} messages`} on the ${channel} channel that no delayq process sends (${bad.reason}); another client of the store sent it`,
    );
  }

  counts(): ReadonlyMap<string, number> {
    return this.dropped;
  }
}
