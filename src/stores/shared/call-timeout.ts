/**
 * `callTimeoutMs`, of the stores that talk to a server (Redis, PostgreSQL): how long one call
 * may go unanswered before it fails with STORE_UNAVAILABLE. A server that hangs (stopped,
 * swapping, behind a link that drops packets) keeps its connections open, so without it a
 * call waits as long as TCP takes to give up: hours.
 */
import { STORE_OPTIONS } from '../../core/option-table/index.js';

export const DEFAULT_CALL_TIMEOUT_MS: number = STORE_OPTIONS.callTimeoutMs.default;
/** Besides 0 (no limit): the table's bounds are 0 to the maximum, with this gap above 0. */
const MIN_CALL_TIMEOUT_MS = 100;
const MAX_CALL_TIMEOUT_MS: number = STORE_OPTIONS.callTimeoutMs.max;

export const CALL_TIMEOUT_RULE = `must be 0 (no limit) or an integer from ${MIN_CALL_TIMEOUT_MS} to ${MAX_CALL_TIMEOUT_MS}`;

export function isCallTimeout(value: number): boolean {
  return Number.isInteger(value) && (value === 0 || (value >= MIN_CALL_TIMEOUT_MS && value <= MAX_CALL_TIMEOUT_MS));
}
