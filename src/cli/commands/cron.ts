/** cron set, get, ls, rm, pause, resume, next: recurring schedules (docs/cron.md), through the client. */
import { InvalidArgumentError, type Command } from 'commander';
import type { RecurringPreviewRequest, RecurringRequest, RecurringView } from '../../client/index.js';
import { contextOf, RequestFailed, UsageError } from '../context.js';
import { formatTime, keyValues, table } from '../output.js';
import { durationArg, jsonArg, positiveIntArg, priorityArg } from './tasks.js';

interface SetOptions {
  cron?: string;
  tz?: string;
  every?: number;
  payload?: unknown;
  start?: string;
  end?: string;
  limit?: number;
  misfire?: 'skip' | 'once' | 'all';
  ttr?: number;
  attempts?: number;
  url?: string;
  priority?: number;
}

function misfireArg(value: string): 'skip' | 'once' | 'all' {
  if (value !== 'skip' && value !== 'once' && value !== 'all') throw new InvalidArgumentError('expected skip, once or all');
  return value;
}

function rule(s: RecurringView): string {
  return s.cron !== null ? `${s.cron}${s.tz === 'UTC' ? '' : ` (${s.tz})`}` : `every ${s.everyMs} ms`;
}

function describeSchedule(s: RecurringView): string {
  return keyValues([
    ['id', s.id],
    ['topic', s.topic],
    ['rule', rule(s)],
    ['payload', JSON.stringify(s.payload)],
    ['misfire', s.misfire],
    ...(s.url !== null ? [['url', s.url] as const] : []),
    ...(s.priority !== 0 ? [['priority', String(s.priority)] as const] : []),
    ['state', s.paused ? 'paused' : s.nextAt === null ? 'ended' : 'active'],
    ['next', s.nextAt === null ? '-' : formatTime(s.nextAt)],
    ['last', s.lastAt === null ? '-' : `${formatTime(s.lastAt)} (task ${s.id}:${s.lastAt})`],
    ['count', s.limit === null ? String(s.count) : `${s.count} of ${s.limit}`],
    ...(s.startAt !== null ? [['start', formatTime(s.startAt)] as const] : []),
    ...(s.endAt !== null ? [['end', formatTime(s.endAt)] as const] : []),
  ]);
}

async function orNotFound(id: string, value: Promise<RecurringView | null>): Promise<RecurringView> {
  const schedule = await value;
  if (schedule === null) throw new RequestFailed('SCHEDULE_NOT_FOUND', `schedule ${id}: not found`);
  return schedule;
}

export function registerCronCommands(program: Command): void {
  const cron = program.command('cron').description('recurring schedules: cron patterns with a time zone, or fixed intervals (docs/cron.md)');

  cron
    .command('set <id> <topic>')
    .description('create or change a schedule; the same definition again changes nothing')
    .option('--cron <pattern>', "cron pattern, 5 fields or 6 with seconds (e.g. '30 9 * * MON-FRI')")
    .option('--tz <zone>', 'IANA time zone of --cron (default UTC)')
    .option('--every <duration>', 'a fixed interval instead of --cron (at least 1s)', durationArg)
    .option('--payload <json>', 'payload of every occurrence, as JSON', jsonArg)
    .option('--start <iso>', 'no occurrence before this time')
    .option('--end <iso>', 'no occurrence at or after this time')
    .option('--limit <n>', 'at most this many occurrences', positiveIntArg)
    .option('--misfire <policy>', 'occurrences missed while no server ran: skip, once (default), all', misfireArg)
    .option('--ttr <duration>', 'time to run of each occurrence', durationArg)
    .option('--attempts <n>', 'maxAttempts of each occurrence', positiveIntArg)
    .option('--url <url>', 'push every occurrence to this URL, whatever its topic (docs/push.md)')
    .option('--priority <n>', 'priority of every occurrence: -100 to 100 (default 0)', priorityArg)
    .action(async (id: string, topic: string, options: SetOptions, command: Command) => {
      const { client, out } = contextOf(command);
      const input: RecurringRequest = {
        topic,
        ...(options.cron !== undefined ? { cron: options.cron } : {}),
        ...(options.tz !== undefined ? { tz: options.tz } : {}),
        ...(options.every !== undefined ? { everyMs: options.every } : {}),
        ...(options.payload !== undefined ? { payload: options.payload } : {}),
        ...(options.start !== undefined ? { startAt: options.start } : {}),
        ...(options.end !== undefined ? { endAt: options.end } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.misfire !== undefined ? { misfire: options.misfire } : {}),
        ...(options.ttr !== undefined ? { ttrMs: options.ttr } : {}),
        ...(options.attempts !== undefined ? { maxAttempts: options.attempts } : {}),
        ...(options.url !== undefined ? { url: options.url } : {}),
        ...(options.priority !== undefined ? { priority: options.priority } : {}),
      };
      const result = await client.schedules.upsert(id, input);
      out.result(result, () => `${result.changed ? 'set' : 'unchanged'}\n${describeSchedule(result.schedule)}`);
    });

  cron
    .command('get <id>')
    .description('a schedule')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const schedule = await orNotFound(id, client.schedules.get(id));
      out.result(schedule, () => describeSchedule(schedule));
    });

  cron
    .command('ls')
    .description('every schedule by id (all pages), or one page with --limit / --after')
    .option('--limit <n>', 'one page of at most this many (the server allows 1 to 1000)', positiveIntArg)
    .option('--after <id>', 'one page, starting after this schedule id (the last page said where)')
    .action(async (options: { limit?: number; after?: string }, command: Command) => {
      const { client, out } = contextOf(command);
      const paged = options.limit !== undefined || options.after !== undefined;
      const { schedules, next } = paged
        ? await client.schedules.listPage({ ...(options.limit !== undefined ? { limit: options.limit } : {}), ...(options.after !== undefined ? { afterId: options.after } : {}) })
        : { schedules: await client.schedules.list(), next: null };
      out.result(paged ? { schedules, next } : { schedules }, () => {
        const listed =
          schedules.length === 0
            ? 'no schedules'
            : table(
                ['ID', 'TOPIC', 'RULE', 'STATE', 'NEXT', 'COUNT'],
                schedules.map((s) => [s.id, s.topic, rule(s), s.paused ? 'paused' : s.nextAt === null ? 'ended' : 'active', s.nextAt === null ? '-' : formatTime(s.nextAt), String(s.count)]),
              );
        return next === null ? listed : `${listed}\nmore: delayq cron ls --after ${next}${options.limit !== undefined ? ` --limit ${options.limit}` : ''}`;
      });
    });

  cron
    .command('rm <id>')
    .description('delete a schedule and cancel its occurrences not yet due')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      if (!(await client.schedules.remove(id))) throw new RequestFailed('SCHEDULE_NOT_FOUND', `schedule ${id}: not found`);
      out.result({ deleted: true }, () => `deleted schedule ${id}`);
    });

  cron
    .command('pause <id>')
    .description('stop creating occurrences (those created ahead are cancelled)')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const schedule = await client.schedules.pause(id);
      out.result(schedule, () => describeSchedule(schedule));
    });

  cron
    .command('resume <id>')
    .description('create occurrences again, from the first at or after now')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const schedule = await client.schedules.resume(id);
      out.result(schedule, () => describeSchedule(schedule));
    });

  cron
    .command('next [id]')
    .description('preview the next occurrence times of a schedule, or of a rule given with --cron (and --tz) or --every, with no schedule stored')
    .option('-n, --count <n>', 'how many (default 10, at most 1000)', positiveIntArg)
    .option('--cron <pattern>', "preview this cron pattern instead of a schedule (e.g. '30 2 * * *')")
    .option('--tz <zone>', 'IANA time zone of --cron (default UTC)')
    .option('--every <duration>', 'preview a fixed interval instead of a schedule (at least 1s)', durationArg)
    .option('--start <iso>', 'with --cron or --every: no occurrence before this time')
    .option('--end <iso>', 'with --cron or --every: no occurrence at or after this time')
    .option('--limit <n>', 'with --cron or --every: at most this many occurrences', positiveIntArg)
    .action(async (id: string | undefined, options: RuleOptions & { count?: number }, command: Command) => {
      const { client, out } = contextOf(command);
      const n = options.count ?? 10;
      const rule = ruleOf(options);
      if ((id === undefined) === (rule === null))
        throw new UsageError(id === undefined ? 'cron next: give a schedule id, or a rule to preview with --cron or --every' : 'cron next: give a schedule id or a rule (--cron, --every), not both');
      let times: number[];
      let zone: string;
      if (rule !== null) {
        times = await client.schedules.preview(rule, n);
        zone = rule.tz ?? 'UTC';
      } else {
        const [found, schedule] = await Promise.all([client.schedules.next(id!, n), client.schedules.get(id!)]);
        times = found;
        zone = schedule?.tz ?? 'UTC';
      }
      const local = times.map((t) => inZone(t, zone));
      out.result({ times, tz: zone, local }, () =>
        times.length === 0
          ? 'no further occurrences'
          : table(
              [zone.toUpperCase() === 'UTC' ? 'UTC' : `LOCAL (${zone})`, 'UTC', 'WHEN'],
              times.map((t, i) => [local[i] ?? '', new Date(t).toISOString(), relativeOf(t)]),
            ),
      );
    });
}

/** The rule options of `cron next`, when one of them was given. */
interface RuleOptions {
  cron?: string;
  tz?: string;
  every?: number;
  start?: string;
  end?: string;
  limit?: number;
}

/** The rule `cron next` previews, or null when it was given none (a schedule id then). */
function ruleOf(options: RuleOptions): Omit<RecurringPreviewRequest, 'n'> | null {
  const given = [options.cron, options.tz, options.every, options.start, options.end, options.limit].some((v) => v !== undefined);
  if (!given) return null;
  return {
    ...(options.cron !== undefined ? { cron: options.cron } : {}),
    ...(options.tz !== undefined ? { tz: options.tz } : {}),
    ...(options.every !== undefined ? { everyMs: options.every } : {}),
    ...(options.start !== undefined ? { startAt: options.start } : {}),
    ...(options.end !== undefined ? { endAt: options.end } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
  };
}

/** A time as a clock in `zone` shows it, with the zone's offset then: 2026-03-29 03:30:00 +02:00. */
export function inZone(ms: number, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(ms)
      .map((part) => [part.type, part.value]),
  ) as Record<string, string>;
  const offset = (parts['timeZoneName'] ?? 'GMT').replace(/^GMT/, '') || '+00:00';
  return `${parts['year']}-${parts['month']}-${parts['day']} ${parts['hour']}:${parts['minute']}:${parts['second']} ${offset}`;
}

/** "in 3h 2m", from formatTime's parenthesis. */
function relativeOf(ms: number): string {
  return /\((.*)\)$/.exec(formatTime(ms))?.[1] ?? '';
}
