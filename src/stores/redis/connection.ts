/**
 * Opens the ioredis client a store URL names and checks that the server can hold a queue:
 *
 *   redis://[user:pass@]host:port[/db]          one Redis (rediss:// for TLS)
 *   redis+cluster://host:port,host:port,...     a Redis Cluster (seed nodes)
 *
 * ioredis reconnects by itself and queues commands while it does, so the store resumes
 * after a Redis restart without a restart of ours.
 */
import { Socket } from 'node:net';
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { DelayQError } from '../../core/errors.js';
import type { Logger } from '../../core/ports/index.js';
import { redactUrl } from '../../core/redact.js';
import { unknownParameter, urlParameters } from '../shared/store-options.js';

export type RedisClient = Redis | Cluster;

export interface ParsedUrl {
  readonly cluster: boolean;
  readonly nodes: readonly { host: string; port: number }[];
  readonly options: RedisOptions;
  /** Store options given in the URL's query (`?prefix=a&shards=4&horizonMs=60000`), unchecked. */
  readonly storeOptions: UrlStoreOptions;
}

export interface UrlStoreOptions {
  prefix?: string;
  shards?: number;
  horizonMs?: number;
  waitReplicas?: number;
  waitTimeoutMs?: number;
  callTimeoutMs?: number;
}

/**
 * The store options a URL may carry, so that a service configured by one string (the
 * server's --store / DELAYQ_STORE) can name its namespace: redis://host:6379/0?prefix=tenant-a.
 */
function queryOptions(query: URLSearchParams, invalid: (why: string) => DelayQError): UrlStoreOptions {
  const out: UrlStoreOptions = {};
  const parameters = urlParameters('redis');
  for (const [name, value] of query) {
    const option = parameters.get(name);
    if (option === undefined) throw invalid(unknownParameter('redis', name, parameters.keys()));
    if (option === 'prefix') out.prefix = value;
    // Only the form here: the bounds are resolveOptions' (INVALID_OPTION), for a URL and code alike.
    else if (option === 'shards' || option === 'horizonMs' || option === 'waitReplicas' || option === 'waitTimeoutMs' || option === 'callTimeoutMs') {
      if (!/^\d+$/.test(value)) throw invalid(`${name} must be a non-negative integer (got "${value.slice(0, 100)}")`);
      out[option] = Number(value);
    } else throw invalid(`parameter "${name}" is not read from a Redis URL`);
  }
  return out;
}

export function parseRedisUrl(url: string): ParsedUrl {
  const invalid = (why: string): DelayQError => new DelayQError('INVALID_STORE_URL', `store "${redactUrl(url)}": ${why}`);
  if (url.startsWith('redis+cluster://')) {
    const question = url.indexOf('?');
    const storeOptions = question >= 0 ? queryOptions(new URLSearchParams(url.slice(question + 1)), invalid) : {};
    const rest = url.slice('redis+cluster://'.length, question >= 0 ? question : undefined);
    const at = rest.lastIndexOf('@');
    const auth = at >= 0 ? rest.slice(0, at) : '';
    const hosts = (at >= 0 ? rest.slice(at + 1) : rest).replace(/\/.*$/, '');
    const nodes = hosts.split(',').filter((h) => h.length > 0).map((h) => hostPort(h, invalid));
    if (nodes.length === 0) throw invalid('give at least one host:port');
    const [user, password] = auth.includes(':') ? auth.split(':', 2) : ['', auth];
    const options: RedisOptions = {};
    if (user) options.username = decodeURIComponent(user);
    if (password) options.password = decodeURIComponent(password);
    return { cluster: true, nodes, options, storeOptions };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('not a URL; use redis://host:port[/db]');
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw invalid('the database must be a number, e.g. redis://localhost:6379/0');
  const options: RedisOptions = { db };
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === 'rediss:') options.tls = {};
  const storeOptions = queryOptions(parsed.searchParams, invalid);
  return { cluster: false, nodes: [{ host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 6379) }], options, storeOptions };
}

function hostPort(text: string, invalid: (why: string) => DelayQError): { host: string; port: number } {
  const colon = text.lastIndexOf(':');
  const host = colon > 0 ? text.slice(0, colon) : text;
  const port = colon > 0 ? Number(text.slice(colon + 1)) : 6379;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw invalid(`bad port in "${text}"`);
  return { host, port };
}

const COMMON: RedisOptions = {
  // Off on purpose. ioredis' auto-pipelining holds commands until a setImmediate and keeps
  // one pipeline per node in flight: what callers send meanwhile waits for every reply of
  // the pipeline before it, so Node and Redis take turns instead of overlapping. The
  // small commands issued together still leave in one write (sendCoalesced below), and the
  // store's batchers already coalesce per shard (ADR 0003).
  enableAutoPipelining: false,
  // A call fails (and the caller retries) instead of hanging through a long outage.
  maxRetriesPerRequest: 20,
};

/**
 * A new connection to what `url` names (the store opens one for commands, one for pub/sub,
 * and duplicates of it keep its options). `callTimeoutMs` (0: none) is ioredis'
 * commandTimeout: a command unanswered that long rejects (callError maps it) while the
 * connection stays, and a reply that comes later is still read off it in order.
 */
export function connect(url: ParsedUrl, callTimeoutMs: number): RedisClient {
  const options: RedisOptions = { ...COMMON, ...url.options, ...(callTimeoutMs > 0 ? { commandTimeout: callTimeoutMs } : {}) };
  if (url.cluster) return new TimedCluster([...url.nodes], { redisOptions: options, enableAutoPipelining: false }, callTimeoutMs);
  const node = url.nodes[0]!;
  return new Redis({ ...options, host: node.host, port: node.port });
}

/**
 * A cluster client whose calls time out wherever they wait. commandTimeout is a node
 * connection's: a call the cluster client holds itself, in the queue it keeps while it has
 * no node to send to (every node down or unreachable, the slot map being fetched again),
 * has no timer at all and waited until a node came back. Here the timer starts when the
 * call is made; the node connection's own `setTimeout` later keeps that timer (ioredis
 * sets one per command), and redirections (MOVED, ASK) resend the same command under it.
 * `duplicate()` builds the same class with the same arguments, so the subscriber and the
 * probe connections are timed too.
 */
class TimedCluster extends Cluster {
  constructor(
    private readonly nodeList: ClusterNode[],
    options: ClusterOptions,
    private readonly callTimeoutMs: number,
  ) {
    super(nodeList, options);
  }

  /** As Cluster's, which builds a plain Cluster. */
  override duplicate(overrideStartupNodes: ClusterNode[] = [], overrideOptions: ClusterOptions = {}): Cluster {
    const nodes = overrideStartupNodes.length > 0 ? overrideStartupNodes : this.nodeList;
    return new TimedCluster([...nodes], { ...this.options, ...overrideOptions }, this.callTimeoutMs);
  }

  override sendCommand(...args: Parameters<Cluster['sendCommand']>): unknown {
    if (this.callTimeoutMs > 0) args[0].setTimeout(this.callTimeoutMs);
    return super.sendCommand(...args);
  }
}

/**
 * Sends one command, holding the connection's writes until the microtasks already queued
 * have run, or until FLUSH_BYTES are waiting: the small calls issued together (a batcher's
 * flushes over 16 shards, a consumer's acks) then leave in one writev instead of a write
 * syscall each, the largest single cost in a profile of S3's pattern. A large call (a
 * scheduleMany's share of a shard) still leaves at once, so that Redis works on it while
 * the next is encoded: holding those too cost S1 20-30%. Unlike ioredis' auto-pipelining
 * (see COMMON) it never waits for replies, and a microtask (not nextTick) ends the hold,
 * so a long chain of promise callbacks does not keep a write back. `issue` must write
 * synchronously, as ioredis does on a ready connection.
 */
export function sendCoalesced<T>(client: RedisClient, issue: () => Promise<T>): Promise<T> {
  const streams = holdWrites(client);
  const reply = issue();
  for (const stream of streams)
    if (stream.writableLength >= FLUSH_BYTES) {
      stream.uncork();
      stream.cork();
    }
  return reply;
}

/** A held burst is written out once it reaches this size, so one write never grows unbounded (ADR 0004). */
const FLUSH_BYTES = 8 * 1024;
const held = new WeakMap<RedisClient, Socket[]>();

function holdWrites(client: RedisClient): Socket[] {
  let streams = held.get(client);
  if (streams) return streams;
  streams = dataNodes(client)
    .map((node) => node.stream)
    .filter((stream): stream is Socket => stream instanceof Socket && !stream.destroyed);
  for (const stream of streams) stream.cork();
  held.set(client, streams);
  queueMicrotask(() => {
    held.delete(client);
    for (const stream of streams) stream.uncork();
  });
  return streams;
}

/** The Redis instances that hold data: every master of a cluster, or the one server. */
export function dataNodes(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/**
 * Loads every script on every master at open, so the first calls of a burst (16 shards'
 * promotes in one millisecond) run at once instead of each failing with NOSCRIPT and
 * sending its whole source again. The EVAL fallback still covers a Redis restarted later.
 */
export async function preloadScripts(client: RedisClient, sources: readonly string[]): Promise<void> {
  await Promise.all(dataNodes(client).map((node) => Promise.all(sources.map((source) => node.script('LOAD', source)))));
}

/**
 * Refuses a Redis that may evict keys: an evicted task body or index entry is a task lost
 * or delivered twice, silently. INFO (not CONFIG GET) because managed Redis often renames CONFIG.
 * A user whose ACL denies INFO (least privilege: `-@dangerous` takes it away) cannot check:
 * the store opens and says so once, rather than refusing an application its queue.
 */
export async function assertNoEviction(client: RedisClient, logger: Logger): Promise<void> {
  for (const node of dataNodes(client)) {
    let info: string;
    try {
      info = await node.info('memory');
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOPERM'))) throw error;
      logger.warn(
        { err: error },
        'redis: this user may not run INFO, so the eviction policy is not checked: make sure the server runs with maxmemory-policy noeviction (an evicted key is a task lost or delivered twice)',
      );
      return;
    }
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? 'unknown';
    if (policy !== 'noeviction')
      throw new DelayQError(
        'STORE_INCOMPATIBLE',
        `Redis ${node.options.host ?? ''}:${node.options.port ?? ''} has maxmemory-policy ${policy}: it may evict keys and so lose tasks; ` +
          'delayq needs maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, or in redis.conf)',
        { policy },
      );
  }
}

/**
 * What a failed Redis call says: ioredis' "Command timed out" (commandTimeout) names the
 * setting that decided it, like the PostgreSQL store's message for the same case.
 */
export function callErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message === 'Command timed out' ? 'no answer within the call timeout (callTimeoutMs): the server may be hung, overloaded or unreachable' : message;
}
