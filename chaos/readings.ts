/**
 * Readings of a round's facts that several scenarios put in their notes: quantiles of
 * lateness, each task's first delivery, and the calls the workers saw rejected.
 */
import type { Facts } from './checker.js';
import type { Round } from './round.js';

/** The p-th quantile of sorted numbers, as text. */
export function quantile(sorted: readonly number[], q: number): string {
  return sorted.length === 0 ? '-' : `${sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]} ms`;
}

/** The first delivery of each task. */
export function firstDeliveries(facts: Facts): Map<string, number> {
  const first = new Map<string, number>();
  for (const d of facts.deliveries) if (!first.has(d.id) || d.at < first.get(d.id)!) first.set(d.id, d.at);
  return first;
}

/** Rejected calls counted by op and code, for a note: "schedule STORE_UNAVAILABLE x40, ...". */
export function errorSummary(errors: Facts['errors']): string {
  const counts = new Map<string, number>();
  for (const e of errors) counts.set(`${e.op} ${e.code}`, (counts.get(`${e.op} ${e.code}`) ?? 0) + 1);
  return counts.size === 0 ? 'none' : [...counts].map(([k, n]) => `${k} x${n}`).join(', ');
}

/** Notes every call the round's workers saw rejected; a problem when one was rejected with another code than STORE_UNAVAILABLE. */
export function rejectionProblems(round: Round): string[] {
  const all = [...round.workerFacts.values()].flatMap((f) => f.errors);
  round.notes.push(`rejected calls: ${errorSummary(all)}`);
  const wrong = all.filter((e) => e.code !== 'STORE_UNAVAILABLE');
  return wrong.length === 0 ? [] : [`${wrong.length} calls rejected with another code than STORE_UNAVAILABLE: ${errorSummary(wrong)}`];
}
