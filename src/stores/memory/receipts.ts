/**
 * The memory store's receipts: `<attempts>.<nonce><reservation in base 36>`, read in place
 * so that an ack allocates nothing. The nonce is this store's (random per process), so a
 * receipt of another store or process never matches; only the canonical spelling of the
 * numbers matches (no leading zeros), so one reservation has one receipt.
 */
import { randomBytes } from 'node:crypto';
import { makeReceipt } from '../../core/task/lifecycle.js';
import type { StoredTask } from './stored-task.js';

export class MemoryReceipts {
  private readonly nonce = randomBytes(6).toString('base64url');
  private issued = 0;

  /** The serial number of a new reservation. */
  next(): number {
    return ++this.issued;
  }

  /** True when `receipt` names the task's current reservation. */
  holds(task: StoredTask, receipt: string, reservation = this.reservationIn(receipt)): boolean {
    if (task.state !== 'reserved' || reservation !== task.reservation) return false;
    return attemptsIn(receipt) === task.attempts;
  }

  /** True when `receipt` is the one whose ack completed the task (an ack sent again). */
  completedBy(task: StoredTask, receipt: string, reservation: number): boolean {
    if (task.state !== 'completed' || task.reservation === 0 || reservation !== task.reservation) return false;
    return attemptsIn(receipt) === task.attempts;
  }

  /** The reservation number a receipt of this store names, or NaN (not ours, or malformed). */
  reservationIn(receipt: string): number {
    const dot = receipt.indexOf('.');
    if (dot <= 0 || !receipt.startsWith(this.nonce, dot + 1)) return Number.NaN;
    return parseCanonical(receipt, dot + 1 + this.nonce.length, receipt.length, 36);
  }

  receiptOf(task: StoredTask): string | null {
    return task.state !== 'reserved' ? null : makeReceipt(task.attempts, this.nonce + task.reservation.toString(36));
  }
}

function attemptsIn(receipt: string): number {
  return parseCanonical(receipt, 0, receipt.indexOf('.'), 10);
}

/** The number spelled by text[from, to) in `radix` (digits, then a-z), or NaN. */
function parseCanonical(text: string, from: number, to: number, radix: 10 | 36): number {
  if (from >= to || (text.charCodeAt(from) === 48 && to - from > 1)) return Number.NaN;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : 99;
    if (digit >= radix) return Number.NaN;
    value = value * radix + digit;
  }
  return value;
}
