import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { keyValues, table } from '../output.js';

export function registerStatsCommand(program: Command): void {
  program
    .command('stats')
    .description('task counts by state and topic, timers, backlog and lateness')
    .action(async (_options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const stats = await client.stats();
      out.result(stats, () => {
        const states = Object.keys(stats.counts) as (keyof typeof stats.counts)[];
        const topics = Object.entries(stats.topics).map(([topic, counts]) => [
          topic,
          ...states.map((s) => String(counts[s] ?? 0)),
          String(stats.ready[topic] ?? 0),
        ]);
        const l = stats.lateness;
        return [
          keyValues([
            ['store', stats.store],
            ...states.map((s) => [s, String(stats.counts[s])] as const),
            ['timers', String(stats.timers)],
            ['lateness', `p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms over ${l.count} deliveries`],
          ]),
          topics.length > 0 ? `\n${table(['TOPIC', ...states.map((s) => s.toUpperCase()), 'READY'], topics)}` : '',
        ].join('\n').trimEnd();
      });
    });
}
