/**
 * Did any task run in two places at once? The long-handler scenario's judge (issue 46), over
 * each worker's own facts (worker.ts with `work`: a D line when a handler starts, a W line as
 * each step of work begins, X when its signal aborts, K when its work was done and its own
 * ack sent, A or L for that ack's answer).
 *
 * A run's abort time is when its signal counts as aborted: a lost reservation's `lostAt`
 * (its lapse: reading `signal.aborted` from then on answers true, even in a process that was
 * frozen past it), or when the abort came for any other reason.
 *
 * For every two runs of one task, the earlier (r1) and the later (r2, which started at s):
 * - r1 worked at or after s (a W line at >= s): it ran in two places at once. Never allowed:
 *   a process frozen does nothing, and when it wakes its handler sees its signal aborted at
 *   the first look (the reservation ran out meanwhile).
 * - r1 had not ended by s (no X, K, A or L before s), and its process was
 *   - killed by then: allowed (it was dead);
 *   - frozen at s: allowed when r1's signal aborted once it woke (an X at or after the
 *     SIGCONT) and r1 did no work after s;
 *   - running: a violation: the first holder had not been told before the second started.
 */
import type { Facts } from './checker.js';

/** A fault the scenario injected into one worker: frozen from `from` to `to`, or killed at `from` (`to` Infinity). */
export interface Fault {
  readonly worker: string;
  readonly kind: 'stop' | 'kill';
  readonly from: number;
  readonly to: number;
}

interface HandlerRun {
  readonly worker: string;
  readonly id: string;
  readonly attempt: number;
  readonly start: number;
  steps: number[];
  /** When it ended: its signal aborted (X), its work was done (K), its ack was acknowledged (A) or refused (L). */
  ended: number;
  aborted: number;
  acked: boolean;
}

export interface Exclusivity {
  /** Handler runs seen. */
  readonly runs: number;
  /** Runs that completed (acked) having run longer than `ttrMs`, and the longest as a multiple of it. */
  readonly pastTtr: number;
  readonly longest: number;
  /** Tasks run twice where the first run had ended (told to stop, or done) before the second began, by the first's worker. */
  readonly handedOver: number;
  readonly handedOverBy: ReadonlyMap<string, number>;
  /** ... where the first holder was frozen at the second's start and aborted when it woke. */
  readonly frozen: number;
  /** ... where the first holder had been killed. */
  readonly killed: number;
  /** Runs of a task begun after a fault had hit the process of an earlier run of it: what the faults tested. */
  readonly takenOver: number;
  readonly violations: string[];
}

function runsOf(workerFacts: ReadonlyMap<string, Facts>): HandlerRun[] {
  const runs: HandlerRun[] = [];
  for (const [worker, facts] of workerFacts) {
    const byKey = new Map<string, HandlerRun>();
    for (const d of facts.deliveries) {
      if (d.got === undefined) continue;
      const run = { worker, id: d.id, attempt: d.attempt, start: d.got, steps: [], ended: Infinity, aborted: Infinity, acked: false };
      byKey.set(`${d.id} ${d.attempt}`, run);
      runs.push(run);
    }
    const at = (id: string, attempt: number): HandlerRun | undefined => byKey.get(`${id} ${attempt}`);
    for (const s of facts.steps) at(s.id, s.attempt)?.steps.push(s.at);
    for (const x of facts.aborts) {
      const run = at(x.id, x.attempt);
      if (run === undefined) continue;
      run.aborted = Math.min(run.aborted, x.at);
      run.ended = Math.min(run.ended, x.at);
    }
    for (const a of facts.acks) {
      const run = at(a.id, a.attempt);
      if (run === undefined) continue;
      run.acked = true;
      run.ended = Math.min(run.ended, a.at);
    }
    for (const end of [...facts.refused, ...facts.done]) {
      const run = at(end.id, end.attempt);
      if (run) run.ended = Math.min(run.ended, end.at);
    }
  }
  return runs;
}

export function exclusivity(workerFacts: ReadonlyMap<string, Facts>, faults: readonly Fault[], ttrMs: number): Exclusivity {
  const runs = runsOf(workerFacts);
  const byTask = new Map<string, HandlerRun[]>();
  for (const run of runs) {
    let list = byTask.get(run.id);
    if (!list) byTask.set(run.id, (list = []));
    list.push(run);
  }
  const violations: string[] = [];
  let handedOver = 0;
  const handedOverBy = new Map<string, number>();
  let frozen = 0;
  let killed = 0;
  let takenOver = 0;
  for (const list of byTask.values()) {
    list.sort((a, b) => a.start - b.start);
    for (let j = 1; j < list.length; j++) {
      const r2 = list[j]!;
      for (let i = 0; i < j; i++) {
        const r1 = list[i]!;
        const s = r2.start;
        const label = `${r1.id}: attempt ${r1.attempt} in ${r1.worker} (from ${r1.start}), attempt ${r2.attempt} in ${r2.worker} from ${s}`;
        if (faults.some((f) => f.worker === r1.worker && f.from <= s)) takenOver++;
        const late = r1.steps.filter((t) => t >= s);
        if (late.length > 0) {
          violations.push(`${label}: the first worked on at ${late[0]} (ran in two places at once)`);
          continue;
        }
        if (r1.ended < s) {
          handedOver++;
          handedOverBy.set(r1.worker, (handedOverBy.get(r1.worker) ?? 0) + 1);
          continue;
        }
        const kill = faults.find((f) => f.worker === r1.worker && f.kind === 'kill' && f.from <= s);
        if (kill) {
          killed++;
          continue;
        }
        const stop = faults.find((f) => f.worker === r1.worker && f.kind === 'stop' && f.from <= s && s <= f.to);
        if (stop) {
          if (r1.aborted >= stop.to && r1.aborted !== Infinity) frozen++;
          else violations.push(`${label}: its worker was frozen then, and its signal did not abort when it woke (aborted at ${r1.aborted}, woke at ${stop.to})`);
          continue;
        }
        violations.push(`${label}: the first had not been told to stop (its signal aborted at ${r1.aborted}, ended at ${r1.ended})`);
      }
    }
  }
  const completed = runs.filter((r) => r.acked);
  const durations = completed.map((r) => (r.ended - r.start) / ttrMs);
  return {
    runs: runs.length,
    pastTtr: durations.filter((x) => x > 1).length,
    longest: durations.length === 0 ? 0 : Math.max(...durations),
    handedOver,
    handedOverBy,
    frozen,
    killed,
    takenOver,
    violations,
  };
}
