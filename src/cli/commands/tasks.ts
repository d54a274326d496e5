/** add, get, cancel, touch, ls: one task at a time, through the client. */
import { InvalidArgumentError, type Command } from 'commander';
import type { DelayQClient, TaskState, TaskView } from '../../client/index.js';
import { contextOf, RequestFailed, UsageError } from '../context.js';
import { parseDuration } from '../duration.js';
import { formatTime, keyValues, table } from '../output.js';

const STATES: readonly TaskState[] = ['pending', 'reserved', 'completed', 'dead', 'cancelled'];
/** States of a task that will still be delivered. */
const WILL_RUN = new Set<string>(['pending', 'reserved']);
const SORTS = ['id', 'runAt'] as const;
type Sort = (typeof SORTS)[number];

function sortArg(value: string): Sort {
  if (!(SORTS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${SORTS.join(', ')}`);
  return value as Sort;
}

export function durationArg(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

export function jsonArg(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new InvalidArgumentError(`not valid JSON: ${value.length > 60 ? `${value.slice(0, 60)}...` : value}`);
  }
}

export function positiveIntArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function stateArg(value: string): TaskState {
  if (!STATES.includes(value as TaskState)) throw new InvalidArgumentError(`expected one of ${STATES.join(', ')}`);
  return value as TaskState;
}

export function describeTask(task: TaskView): string {
  const facts = keyValues([
    ['id', task.id],
    ['topic', task.topic],
    ['state', task.state],
    ['runAt', formatTime(task.runAt)],
    ['attempts', `${task.attempts} of ${task.maxAttempts}`],
    ['ttr', `${task.ttrMs} ms`],
    ['reservedUntil', formatTime(task.reservedUntil)],
    ['lastError', task.lastError ?? '-'],
    ...(task.url ? ([['url', task.url]] as [string, string][]) : []),
    ...(task.priority !== 0 ? ([['priority', String(task.priority)]] as [string, string][]) : []),
    ['created', formatTime(task.createdAt)],
    ['payload', JSON.stringify(task.payload)],
  ]);
  if (task.history.length === 0) return facts;
  // Oldest first, as the server keeps them; one line each, the error on that line.
  const rows = task.history.map((a) => [String(a.attempt), new Date(a.startedAt).toISOString(), `${a.durationMs} ms`, a.outcome, (a.error ?? '-').replace(/\s+/g, ' ')]);
  return `${facts}\n\nhistory (last ${task.history.length} attempts, oldest first)\n${table(['attempt', 'started', 'took', 'outcome', 'error'], rows)}`;
}

/** After cancel/reschedule said no: "no such task" or "it is <state>". */
async function notPending(client: DelayQClient, id: string, what: string): Promise<RequestFailed> {
  const task = await client.get(id);
  return task === null
    ? new RequestFailed('TASK_NOT_FOUND', `task ${id} not found`)
    : new RequestFailed('TASK_NOT_PENDING', `cannot ${what} task ${id}: it is ${task.state}, not pending`);
}

interface AddOptions {
  payload?: unknown;
  delay?: number;
  at?: string;
  id?: string;
  ttr?: number;
  maxAttempts?: number;
  url?: string;
  priority?: number;
}

/** A task's priority: an integer from -100 to 100 (ADR 0057). */
export function priorityArg(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value) || n < -100 || n > 100) throw new InvalidArgumentError('expected an integer from -100 to 100');
  return n;
}

/** The `delayq ls` that lists the next page: the same filters, after `next`. */
function moreCommand(options: { topic?: string; state?: TaskState; limit?: number; sort?: Sort }, next: string): string {
  const parts = ['delayq ls'];
  if (options.topic !== undefined) parts.push('--topic', options.topic);
  if (options.state !== undefined) parts.push('--state', options.state);
  if (options.limit !== undefined) parts.push('--limit', String(options.limit));
  if (options.sort !== undefined) parts.push('--sort', options.sort);
  parts.push('--after', next);
  return parts.join(' ');
}

export function registerTaskCommands(program: Command): void {
  program
    .command('add <topic>')
    .description('schedule a task')
    .option('--payload <json>', 'payload as JSON', jsonArg)
    .option('--delay <duration>', 'run after this long (30s, 5m, 48h...)', durationArg)
    .option('--at <iso>', 'run at this time (ISO 8601, e.g. 2030-01-01T09:00:00Z)')
    .option('--id <id>', 'task id (idempotency key); generated when absent')
    .option('--ttr <duration>', 'time to run before redelivery', durationArg)
    .option('--max-attempts <n>', 'deliveries before the task is dead', positiveIntArg)
    .option('--url <url>', 'push this task to this URL when due, whatever its topic (signed: docs/push.md)')
    .option('--priority <n>', 'among due tasks of the topic, higher first: -100 to 100 (default 0)', priorityArg)
    .action(async (topic: string, options: AddOptions, command: Command) => {
      if (options.delay !== undefined && options.at !== undefined) throw new UsageError('give --delay or --at, not both');
      const { client, out } = contextOf(command);
      const result = await client.schedule({
        topic,
        ...(options.payload !== undefined ? { payload: options.payload } : {}),
        ...(options.delay !== undefined ? { delayMs: options.delay } : {}),
        ...(options.at !== undefined ? { runAt: options.at } : {}),
        ...(options.id !== undefined ? { id: options.id } : {}),
        ...(options.ttr !== undefined ? { ttrMs: options.ttr } : {}),
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
        ...(options.url !== undefined ? { url: options.url } : {}),
        ...(options.priority !== undefined ? { priority: options.priority } : {}),
      });
      if (result.created) {
        out.result(result, () => `scheduled ${result.id} on ${topic} at ${formatTime(result.runAt)}`);
        return;
      }
      // The id is taken: say what that task is doing, and fail when it will not run.
      const state = (await client.get(result.id))?.state ?? 'purged';
      out.result({ ...result, state }, () => `exists (unchanged): ${result.id} is ${state}${WILL_RUN.has(state) ? `, runs at ${formatTime(result.runAt)}` : ''}`);
      if (!WILL_RUN.has(state))
        throw new RequestFailed(
          'TASK_EXISTS',
          `task ${result.id} already exists and is ${state}: nothing was scheduled and it will not run again; give another --id${state === 'dead' ? ` or run delayq retry ${result.id}` : ''}`,
        );
    });

  program
    .command('get <id>')
    .description('show a task')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const task = await client.get(id);
      if (task === null) throw new RequestFailed('TASK_NOT_FOUND', `task ${id} not found`);
      out.result(task, () => describeTask(task));
    });

  program
    .command('cancel <ids...>')
    .description('cancel pending tasks (several ids: one request, one answer each)')
    .action(async (ids: string[], _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      if (ids.length === 1) {
        const id = ids[0]!;
        if (!(await client.cancel(id))) throw await notPending(client, id, 'cancel');
        out.result({ id, cancelled: true }, () => `cancelled ${id}`);
        return;
      }
      const cancelled = await client.cancelMany(ids);
      const results = ids.map((id, i) => ({ id, cancelled: cancelled[i] === true }));
      out.result({ results }, () => results.map((r) => `${r.cancelled ? 'cancelled' : 'not cancelled'} ${r.id}`).join('\n'));
      const missed = results.filter((r) => !r.cancelled).map((r) => r.id);
      if (missed.length > 0)
        throw new RequestFailed('TASK_NOT_PENDING', `not cancelled (unknown or no longer pending): ${missed.join(', ')}`);
    });

  program
    .command('touch <id>')
    .description("push a pending task's time back (a keepalive)")
    .requiredOption('--delay <duration>', 'run this long from now', durationArg)
    .action(async (id: string, options: { delay: number }, command: Command) => {
      const { client, out } = contextOf(command);
      const runAt = Date.now() + options.delay;
      if (!(await client.reschedule(id, { delayMs: options.delay }))) throw await notPending(client, id, 'touch');
      out.result({ id, runAt }, () => `${id} now runs at ${formatTime(runAt)}`);
    });

  program
    .command('ls')
    .description('list tasks (the server pages them in id order)')
    .option('--topic <topic>', 'only this topic')
    .option('--state <state>', `only this state (${STATES.join(', ')})`, stateArg)
    .option('--limit <n>', 'at most this many (default 100)', positiveIntArg)
    .option('--after <id>', 'start after this id (paging)')
    .option('--sort <field>', 'id (default) or runAt: runAt sorts the page fetched (--limit tasks in id order) by run time, here; it is not the soonest tasks of the whole queue', sortArg)
    .action(async (options: { topic?: string; state?: TaskState; limit?: number; after?: string; sort?: Sort }, command: Command) => {
      const { client, out } = contextOf(command);
      const { tasks, next } = await client.listPage({
        ...(options.topic !== undefined ? { topic: options.topic } : {}),
        ...(options.state !== undefined ? { state: options.state } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.after !== undefined ? { afterId: options.after } : {}),
      });
      if (options.sort === 'runAt') tasks.sort((a, b) => a.runAt - b.runAt || (a.id < b.id ? -1 : 1));
      out.result(tasks, () => {
        const listed =
          tasks.length === 0
            ? 'no tasks'
            : table(
                ['ID', 'TOPIC', 'STATE', 'RUN AT', 'ATTEMPTS'],
                tasks.map((t) => [t.id, t.topic, t.state, formatTime(t.runAt), `${t.attempts}/${t.maxAttempts}`]),
              );
        // The page may end before --limit (4 MiB of tasks): say where the next one starts.
        return next === null ? listed : `${listed}\nmore: ${moreCommand(options, next)}`;
      });
    });
}
