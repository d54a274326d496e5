/** What a schedule swap changes. */
import type { RecurringScheduleSwap } from '../ports/index.js';

/** True when a swap changes what schedulesVersion covers (not a mere move forward). */
export function swapChangesDefinition(swap: RecurringScheduleSwap): boolean {
  const { expected, next } = swap;
  return next.rev !== expected.rev || next.createdAt !== expected.createdAt || next.paused !== expected.paused;
}
