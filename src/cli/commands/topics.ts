/** topic: operations on a whole topic (pause, resume, purge), through the client. */
import { createInterface } from 'node:readline/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { TopicPurgeState } from '../../client/index.js';
import { contextOf, UsageError } from '../context.js';

const PURGE_STATES: readonly TopicPurgeState[] = ['pending', 'dead', 'completed'];

function purgeStateArg(value: string): TopicPurgeState {
  if (!PURGE_STATES.includes(value as TopicPurgeState)) throw new InvalidArgumentError(`expected one of ${PURGE_STATES.join(', ')}`);
  return value as TopicPurgeState;
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
      .description(verb === 'pause' ? 'deliver nothing of the topic until it is resumed (every server sharing the store, within 1 s)' : 'deliver the topic again: what fell due meanwhile goes out in runAt order')
      .action(async (name: string, _options: unknown, command: Command) => {
        const { client, out } = contextOf(command);
        const result = await client.topics[verb](name);
        out.result(result, () => `${name} ${result.paused ? 'paused' : 'resumed'}${result.changed ? '' : ` (it was ${result.paused ? 'paused' : 'not paused'} already)`}`);
      });
  }
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
