import type { Command } from 'commander';
import { own } from '../../core/dict.js';
import { contextOf } from '../context.js';
import { keyValues, table } from '../output.js';
import type { PushCountsView, PushStatsView } from '../../wire/types.js';
import { positiveIntArg } from './tasks.js';

/** "3 (http5xx 2, timeout 1)", or "0". */
function failures(counts: PushCountsView): string {
  const entries = Object.entries(counts.failed).filter(([, n]) => (n ?? 0) > 0);
  const total = entries.reduce((sum, [, n]) => sum + (n ?? 0), 0);
  return entries.length === 0 ? '0' : `${total} (${entries.map(([k, n]) => `${k} ${n}`).join(', ')})`;
}

function pushTables(push: PushStatsView | undefined): string[] {
  if (push === undefined || Object.keys(push.topics).length === 0) return [];
  // A server from before noSlot leaves it out.
  const row = (c: PushCountsView): string[] => [String(c.sent), String(c.ok), failures(c), String(c.deferred), String(c.noSlot ?? 0)];
  const topics = Object.entries(push.topics).map(([topic, c]) => [topic, ...row(c)]);
  const origins = Object.entries(push.origins).map(([origin, c]) => {
    const b = c.breaker;
    const state = b.state === 'closed' ? (b.consecutiveFailures > 0 ? `closed (${b.consecutiveFailures} failed)` : 'closed') : `${b.state} until ${new Date(b.openUntil ?? 0).toISOString()}`;
    return [origin, state, ...row(c)];
  });
  return [`\n${table(['PUSH TOPIC', 'SENT', 'OK', 'FAILED', 'DEFERRED', 'NO SLOT'], topics)}`, `\n${table(['PUSH ORIGIN', 'BREAKER', 'SENT', 'OK', 'FAILED', 'DEFERRED', 'NO SLOT'], origins)}`];
}

export function registerStatsCommand(program: Command): void {
  program
    .command('stats')
    .description('task counts by state and topic, timers, backlog and lateness (topics a page at a time: the first 1000 by name)')
    .option('--topic-limit <n>', 'topics in the page (default 1000, at most 10000)', positiveIntArg)
    .option('--after <topic>', 'the page of topics after this one (the last page said where)')
    .action(async (options: { topicLimit?: number; after?: string }, command: Command) => {
      const { client, out } = contextOf(command);
      const stats = await client.stats({ ...(options.topicLimit !== undefined ? { topicLimit: options.topicLimit } : {}), ...(options.after !== undefined ? { after: options.after } : {}) });
      out.result(stats, () => {
        const states = Object.keys(stats.counts) as (keyof typeof stats.counts)[];
        const topics = Object.entries(stats.topics).map(([topic, counts]) => [
          topic,
          ...states.map((s) => String(counts[s] ?? 0)),
          String(own(stats.ready, topic) ?? 0),
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
          ...pushTables(stats.push),
          stats.topicsNext === null ? '' : `\nmore topics (${stats.topicCount} in all): delayq stats --after ${stats.topicsNext}${options.topicLimit !== undefined ? ` --topic-limit ${options.topicLimit}` : ''}`,
        ].join('\n').trimEnd();
      });
    });
}
