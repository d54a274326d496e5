/** retry: dead tasks back to pending, one by id or a topic's, through the client. */
import type { Command } from 'commander';
import { contextOf, RequestFailed, UsageError } from '../context.js';
import { positiveIntArg } from './tasks.js';

interface RetryOptions {
  topic?: string;
  dead?: boolean;
  max?: number;
}

export function registerRetryCommand(program: Command): void {
  program
    .command('retry [id]')
    .description('bring a dead task back to pending, due now (attempts reset); or, with --topic t --dead, the dead tasks of a topic')
    .option('--topic <topic>', "with --dead: retry this topic's dead tasks")
    .option('--dead', 'with --topic: every dead task of the topic (in rounds of --max)')
    .option('--max <n>', 'with --topic: at most this many per request (default: the server\'s maxBatch)', positiveIntArg)
    .action(async (id: string | undefined, options: RetryOptions, command: Command) => {
      const { client, out } = contextOf(command);
      if (id !== undefined) {
        if (options.topic !== undefined || options.dead === true) throw new UsageError('give an id, or --topic <topic> --dead, not both');
        if (!(await client.retryDead(id))) {
          const task = await client.get(id);
          if (task === null) throw new RequestFailed('TASK_NOT_FOUND', `task ${id} not found`);
          throw new RequestFailed('TASK_NOT_DEAD', `cannot retry task ${id}: it is ${task.state}, not dead`);
        }
        out.result({ id, retried: true }, () => `retried ${id}: pending, due now`);
        return;
      }
      if (options.topic === undefined || options.dead !== true) throw new UsageError('give a task id, or --topic <topic> --dead for the dead tasks of a topic');
      const topic = options.topic;
      let retried = 0;
      // The server retries at most maxBatch a request and says when more remain.
      for (;;) {
        const round = await client.retryDeadOfTopic(topic, options.max === undefined ? {} : { max: options.max });
        retried += round.retried;
        if (!round.more || round.retried === 0) break;
      }
      out.result({ topic, retried }, () => (retried === 0 ? `no dead tasks on ${topic}` : `retried ${retried} dead task${retried === 1 ? '' : 's'} of ${topic}: pending, due now`));
    });
}
