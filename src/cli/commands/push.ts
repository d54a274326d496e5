/** push set, get, ls, rm: a topic's push subscription (docs/push.md), through the client. */
import { InvalidArgumentError, type Command } from 'commander';
import type { PushSubscriptionRequest, PushSubscriptionView } from '../../client/index.js';
import { contextOf, RequestFailed } from '../context.js';
import { formatTime, keyValues, table } from '../output.js';
import { durationArg } from './tasks.js';

interface SetOptions {
  secret?: string;
  timeout?: number;
  concurrency?: number;
  header?: [string, string][];
}

function headerArg(value: string, previous: [string, string][] = []): [string, string][] {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected name=value (got "${value}")`);
  return [...previous, [value.slice(0, at), value.slice(at + 1)]];
}

function countArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function describeSubscription(s: PushSubscriptionView): string {
  return keyValues([
    ['topic', s.topic],
    ['url', s.url],
    ['secrets', s.secrets.map((x) => (x.expiresAt === null ? x.secret : `${x.secret} (until ${formatTime(x.expiresAt)})`)).join(', ')],
    ['timeout', `${s.timeoutMs} ms`],
    ['concurrency', String(s.concurrency)],
    ['headers', Object.keys(s.headers).length === 0 ? '-' : Object.entries(s.headers).map(([k, v]) => `${k}: ${v}`).join(', ')],
    ['updated', formatTime(s.updatedAt)],
  ]);
}

export function registerPushCommands(program: Command): void {
  const push = program.command('push').description("a topic's push subscription: due tasks are POSTed to a URL, signed (docs/push.md)");

  push
    .command('set <topic> <url>')
    .description('create or replace the subscription; prints the secret when given or generated (shown once)')
    .option('--secret <whsec>', 'signing secret (whsec_ + base64); default: keep the current one, or generate one')
    .option('--timeout <duration>', 'a push with no answer within this fails (e.g. 10s)', durationArg)
    .option('--concurrency <n>', 'pushes of this topic in flight at once', countArg)
    .option('--header <name=value>', 'an extra request header (repeatable)', headerArg)
    .action(async (topic: string, url: string, options: SetOptions, command: Command) => {
      const { client, out } = contextOf(command);
      const input: PushSubscriptionRequest = {
        url,
        ...(options.secret !== undefined ? { secret: options.secret } : {}),
        ...(options.timeout !== undefined ? { timeoutMs: options.timeout } : {}),
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(options.header !== undefined ? { headers: Object.fromEntries(options.header) } : {}),
      };
      const result = await client.setPush(topic, input);
      out.result(result, () =>
        [describeSubscription(result.subscription), ...(result.secret !== undefined ? [`\nsecret  ${result.secret}\n(shown once: give it to the receiver now)`] : [])].join('\n'),
      );
    });

  push
    .command('get <topic>')
    .description("the topic's subscription (secrets masked)")
    .action(async (topic: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const subscription = await client.getPush(topic);
      if (subscription === null) throw new RequestFailed('PUSH_NOT_FOUND', `topic ${topic} has no push subscription`);
      out.result(subscription, () => describeSubscription(subscription));
    });

  push
    .command('ls')
    .description('every push subscription by topic (all pages), or one page with --limit / --after')
    .option('--limit <n>', 'one page of at most this many (the server allows 1 to 1000)', countArg)
    .option('--after <topic>', 'one page, starting after this topic (the last page said where)')
    .action(async (options: { limit?: number; after?: string }, command: Command) => {
      const { client, out } = contextOf(command);
      const paged = options.limit !== undefined || options.after !== undefined;
      const { subscriptions, next } = paged
        ? await client.listPushPage({ ...(options.limit !== undefined ? { limit: options.limit } : {}), ...(options.after !== undefined ? { after: options.after } : {}) })
        : { subscriptions: await client.listPush(), next: null };
      out.result(paged ? { subscriptions, next } : { subscriptions }, () => {
        const listed =
          subscriptions.length === 0
            ? 'no push subscriptions'
            : table(
                ['TOPIC', 'URL', 'CONCURRENCY', 'TIMEOUT'],
                subscriptions.map((s) => [s.topic, s.url, String(s.concurrency), `${s.timeoutMs} ms`]),
              );
        return next === null ? listed : `${listed}\nmore: delayq push ls --after ${next}${options.limit !== undefined ? ` --limit ${options.limit}` : ''}`;
      });
    });

  push
    .command('rm <topic>')
    .description("delete the topic's subscription: its tasks go to pull consumers again")
    .action(async (topic: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      if (!(await client.deletePush(topic))) throw new RequestFailed('PUSH_NOT_FOUND', `topic ${topic} has no push subscription`);
      out.result({ deleted: true }, () => `deleted the push subscription of ${topic}`);
    });
}
