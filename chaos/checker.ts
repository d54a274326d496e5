/**
 * The checker, in the style of Jepsen's queue checker, over the facts the workers logged
 * (worker.ts): which schedules were acknowledged, which deliveries happened when, which
 * acks were acknowledged.
 *
 * - lost: a task whose schedule was acknowledged and that was never delivered.
 * - early: a delivery before the task's runAt.
 *
 * A delivery's time is when the store reserved it (reservedUntil - ttrMs), not when the
 * answer reached the consumer: a consumer frozen (SIGSTOP) between the two gets a
 * reservation that ran out meanwhile, whose task may have been delivered again and acked
 * since; its own ack is then refused (stale), as the receipt promises.
 * - acked-again: a delivery of a task after an ack of an earlier delivery of it was
 *   acknowledged (the ack was lost, or a stale receipt acked); also an ack acknowledged
 *   for a delivery whose task had been delivered again since (a receipt that was not the
 *   current one).
 * - duplicates: deliveries beyond each task's first. Each is explained by an open lease when
 *   the delivery before it was never acked (its consumer was killed, frozen or too slow,
 *   so its reservation ran out, with a later attempt; or the reservation itself was lost in
 *   a crash, with the same attempt: SQLite resolves a reservation before its commit,
 *   docs/sqlite.md); one after an acked delivery is unexplained.
 *
 * Deliveries of tasks whose schedule was never acknowledged (the producer died before the
 * answer) are allowed and not counted as anything but deliveries.
 */
export interface Facts {
  /** id -> runAt, for every acknowledged schedule. */
  readonly scheduled: Map<string, number>;
  /** `got`: when the consumer had it, if its worker said (the flow-limit scenario's rate). */
  readonly deliveries: { id: string; attempt: number; at: number; got?: number }[];
  readonly acks: { id: string; attempt: number; at: number }[];
  /** Rejected calls (`E` lines): not judged here; a scenario asserts which codes its callers saw. */
  readonly errors: { op: string; code: string; at: number; ms: number }[];
  /** Calls that succeeded slowly (`C` lines, from workers given slowCallMs): not judged here either. */
  readonly slow: { op: string; at: number; ms: number }[];
  /** Long handlers (`work` workers): each step begun (`W`), each signal aborted (`X`), each own ack sent (`K`) and refused (`L`); judged by exclusive.ts. */
  readonly steps: { id: string; attempt: number; at: number }[];
  readonly done: { id: string; attempt: number; at: number }[];
  readonly aborts: { id: string; attempt: number; at: number; code: string }[];
  readonly refused: { id: string; attempt: number; at: number }[];
}

export interface Verdict {
  readonly scheduled: number;
  readonly delivered: number;
  readonly lost: number;
  readonly early: number;
  readonly ackedAgain: number;
  readonly duplicates: number;
  readonly unexplainedDuplicates: number;
  /** The worst lateness (first delivery - runAt) over the acknowledged tasks, ms. */
  readonly maxLatenessMs: number;
  /** Some of the offending ids, for the report. */
  readonly examples: { lost: string[]; early: string[]; ackedAgain: string[]; unexplained: string[] };
}

export function newFacts(): Facts {
  return { scheduled: new Map(), deliveries: [], acks: [], errors: [], slow: [], steps: [], done: [], aborts: [], refused: [] };
}

/** Reads one worker's stdout line into the facts. */
export function addLine(facts: Facts, line: string): void {
  const [kind, id, a, b, c] = line.split(' ');
  if (id === undefined) return;
  if (kind === 'S') facts.scheduled.set(id, Number(a));
  else if (kind === 'D') facts.deliveries.push({ id, attempt: Number(a), at: Number(b), ...(c === undefined ? {} : { got: Number(c) }) });
  else if (kind === 'A') facts.acks.push({ id, attempt: Number(a), at: Number(b) });
  else if (kind === 'E') facts.errors.push({ op: id, code: a ?? '', at: Number(b), ms: Number(c) });
  else if (kind === 'C') facts.slow.push({ op: id, at: Number(a), ms: Number(b) });
  else if (kind === 'W') facts.steps.push({ id, attempt: Number(a), at: Number(b) });
  else if (kind === 'X') facts.aborts.push({ id, attempt: Number(a), at: Number(b), code: c ?? '' });
  else if (kind === 'L') facts.refused.push({ id, attempt: Number(a), at: Number(b) });
  else if (kind === 'K') facts.done.push({ id, attempt: Number(a), at: Number(b) });
}

/** The acknowledged schedules with no delivery (yet), in the order they were acknowledged. */
export function undelivered(facts: Facts): string[] {
  const delivered = new Set(facts.deliveries.map((d) => d.id));
  return [...facts.scheduled.keys()].filter((id) => !delivered.has(id));
}

export function check(facts: Facts): Verdict {
  const deliveriesOf = new Map<string, { attempt: number; at: number }[]>();
  for (const d of facts.deliveries) {
    let list = deliveriesOf.get(d.id);
    if (!list) deliveriesOf.set(d.id, (list = []));
    list.push(d);
  }
  const acksOf = new Map<string, { attempt: number; at: number }[]>();
  for (const a of facts.acks) {
    let list = acksOf.get(a.id);
    if (!list) acksOf.set(a.id, (list = []));
    list.push(a);
  }
  const examples = { lost: [] as string[], early: [] as string[], ackedAgain: [] as string[], unexplained: [] as string[] };
  const note = (list: string[], id: string): void => void (list.length < 5 && list.push(id));
  let lost = 0;
  let early = 0;
  let ackedAgain = 0;
  let duplicates = 0;
  let unexplained = 0;
  let maxLateness = 0;
  let delivered = 0;

  for (const [id, runAt] of facts.scheduled) {
    const list = deliveriesOf.get(id);
    if (!list || list.length === 0) {
      lost++;
      note(examples.lost, id);
      continue;
    }
    delivered++;
    const first = Math.min(...list.map((d) => d.at));
    maxLateness = Math.max(maxLateness, first - runAt);
    for (const d of list)
      if (d.at < runAt) {
        early++;
        note(examples.early, id);
      }
  }

  for (const [id, list] of deliveriesOf) {
    list.sort((x, y) => x.at - y.at || x.attempt - y.attempt);
    const acks = acksOf.get(id) ?? [];
    const firstAck = acks.length === 0 ? Infinity : Math.min(...acks.map((a) => a.at));
    for (let i = 0; i < list.length; i++) {
      const d = list[i]!;
      if (d.at > firstAck) {
        ackedAgain++;
        note(examples.ackedAgain, id);
      }
      if (i === 0) continue;
      duplicates++;
      const before = list[i - 1]!;
      const beforeAcked = acks.some((a) => a.attempt === before.attempt && a.at <= d.at);
      if (beforeAcked) {
        unexplained++;
        note(examples.unexplained, id);
      }
    }
    // An ack acknowledged for an attempt older than one delivered before that ack: a stale receipt that acked.
    for (const a of acks)
      if (list.some((d) => d.attempt > a.attempt && d.at < a.at)) {
        ackedAgain++;
        note(examples.ackedAgain, id);
      }
  }

  return {
    scheduled: facts.scheduled.size,
    delivered,
    lost,
    early,
    ackedAgain,
    duplicates,
    unexplainedDuplicates: unexplained,
    maxLatenessMs: maxLateness,
    examples,
  };
}
