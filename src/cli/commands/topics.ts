/** topic: operations on a whole topic (pause, resume, flow limits, purge), through the client. */
import { createInterface } from 'node:readline/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { TopicLimitsRequest, TopicLimitsView, TopicPurgeState } from '../../client/index.js';
import { contextOf, RequestFailed, UsageError } from '../context.js';
import { formatDuration } from '../duration.js';
import { durationArg, positiveIntArg } from './tasks.js';

const PURGE_STATES: readonly TopicPurgeState[] = ['pending', 'dead', 'completed'];

function purgeStateArg(value: string): TopicPurgeState {
  if (!PURGE_STATES.includes(value as TopicPurgeState)) throw new InvalidArgumentError(`expected one of ${PURGE_STATES.join(', ')}`);
  return value as TopicPurgeState;
}

interface LimitsOptions {
  rate?: number;
  period?: number;
  burst?: number;
  concurrency?: number;
  clear?: boolean;
}

/** One line for people: `mail: 5 per 1s (burst 10), at most 3 in flight`. */
export function describeLimits(topic: string, limits: TopicLimitsView): string {
  const parts: string[] = [];
  if (limits.rate !== null) parts.push(`${limits.rate} per ${formatDuration(limits.periodMs)} (burst ${limits.burst})`);
  if (limits.concurrency !== null) parts.push(`at most ${limits.concurrency} in flight`);
  return `${topic}: ${parts.join(', ')}`;
}

/** The limits the options ask for, or null when they ask for none (read or clear). */
function requestedLimits(options: LimitsOptions): TopicLimitsRequest | null {
  const { rate, period, burst, concurrency } = options;
  const setting = rate !== undefined || period !== undefined || burst !== undefined || concurrency !== undefined;
  if (options.clear === true) {
    if (setting) throw new UsageError('--clear takes no --rate, --period, --burst or --concurrency');
    return null;
  }
  if (!setting) return null;
  // The server says the same, but this way the message names the options.
  if (rate === undefined && (period !== undefined || burst !== undefined)) throw new UsageError('--period and --burst need --rate');
  return { ...(rate !== undefined ? { rate } : {}), ...(period !== undefined ? { periodMs: period } : {}), ...(burst !== undefined ? { burst } : {}), ...(concurrency !== undefined ? { concurrency } : {}) };
}

interface PurgeOptions {
  state: TopicPurgeState;
  yes?: boolean;
}

/**
 * Asks on the terminal whether to go on; true only for an answer starting with y. Without a
 * terminal on stdin nobody can answer, so the caller must say --yes.
 */
async function confirmed(question: string): Promise<boolean> {
  if (process.stdin.isTTY !== true) throw new UsageError('stdin is not a terminal: nobody can confirm; add --yes to purge');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export function registerTopicCommands(program: Command): void {
  const topic = program.command('topic').description('operations on a whole topic');
  for (const verb of ['pause', 'resume'] as const) {
    topic
      .command(`${verb} <topic>`)
      .description(verb === 'pause' ? 'deliver nothing of the topic until it is resumed (every server sharing the store, once this returns)' : 'deliver the topic again: what fell due meanwhile goes out in runAt order')
      .action(async (name: string, _options: unknown, command: Command) => {
        const { client, out } = contextOf(command);
        const result = await client.topics[verb](name);
        out.result(result, () => `${name} ${result.paused ? 'paused' : 'resumed'}${result.changed ? '' : ` (it was ${result.paused ? 'paused' : 'not paused'} already)`}`);
      });
  }
  topic
    .command('limits <topic>')
    .description("print the topic's flow limits; set them with --rate and/or --concurrency; remove them with --clear (every server sharing the store, once this returns)")
    .option('--rate <n>', 'deliveries per period', positiveIntArg)
    .option('--period <duration>', 'the period of --rate: 500ms, 1s, 1m... or ms (default 1s)', durationArg)
    .option('--burst <n>', 'the most deliveries at once after an idle spell (default --rate)', positiveIntArg)
    .option('--concurrency <n>', 'the most deliveries in flight at once', positiveIntArg)
    .option('--clear', 'remove the limits: the topic is delivered unlimited again')
    .action(async (name: string, options: LimitsOptions, command: Command) => {
      const { client, out } = contextOf(command);
      const wanted = requestedLimits(options);
      if (wanted !== null) {
        const limits = await client.topics.setLimits(name, wanted);
        out.result({ topic: name, limits }, () => describeLimits(name, limits));
      } else if (options.clear === true) {
        const cleared = await client.topics.clearLimits(name);
        out.result({ topic: name, cleared }, () => (cleared ? `${name}: limits cleared` : `${name}: had no limits`));
      } else {
        const limits = await client.topics.getLimits(name);
        if (limits === null) throw new RequestFailed('LIMITS_NOT_FOUND', `topic ${name} has no flow limits`);
        out.result({ topic: name, limits }, () => describeLimits(name, limits));
      }
    });
  topic
    .command('purge <topic>')
    .description("delete the topic's tasks in one state (completed also takes the cancelled ones; reserved tasks are never purged)")
    .requiredOption('--state <state>', `the state to purge (${PURGE_STATES.join(', ')})`, purgeStateArg)
    .option('--yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (name: string, options: PurgeOptions, command: Command) => {
      const { client, out } = contextOf(command);
      if (options.yes !== true && !(await confirmed(`Delete every ${options.state} task of ${name}? This cannot be undone.`))) {
        out.result({ topic: name, state: options.state, purged: 0, aborted: true }, () => 'nothing purged');
        return;
      }
      const purged = await client.topics.purge(name, { state: options.state });
      out.result({ topic: name, state: options.state, purged }, () => `purged ${purged} ${options.state} task${purged === 1 ? '' : 's'} of ${name}`);
    });
}
