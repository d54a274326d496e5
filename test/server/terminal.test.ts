// What `delayq serve` says to its operator, from real processes: the start banner (JSON
// line, pretty text, and pretty by itself on a terminal through `script`), redacted pretty
// logs, and the one line on stderr for each known start-up failure.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createServerLogger } from '../../src/server/logger.js';
import { cli, redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';
import { runCliProcess, spawnServer } from '../helpers/service-process.js';

const CLI = ['--import', 'tsx', 'src/cli/main.ts'];
const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/** Runs `delayq serve` until its banner shows, then stops it; resolves with all it wrote and its exit code. */
function serveUntilBanner(args: readonly string[], options: { tty?: boolean } = {}): Promise<{ output: string; address: string; code: number | null }> {
  const command = [process.execPath, ...CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args];
  // `script` runs the command on a pseudo-terminal: stdout is a TTY, as in a shell.
  const child = options.tty
    ? spawn('script', ['-qec', `exec ${command.map((part) => `'${part}'`).join(' ')}`, '/dev/null'], { env: { ...process.env, DELAYQ_TOKEN: '' }, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(command[0] ?? '', command.slice(1), { env: { ...process.env, DELAYQ_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    let address = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no banner in 20 s:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)[\s\S]*token +[^\n]+\n/.exec(output);
      if (match && address === '') {
        address = match[1] ?? '';
        child.kill('SIGTERM');
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ output, address, code });
    });
  });
}

function assertOneLineNoStack(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 1, result.stderr);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
  assert.match(lines[0] ?? '', /^delayq serve: could not start: /);
  assert.match(lines[0] ?? '', pattern);
  assert.doesNotMatch(result.stdout + result.stderr, /\n\s+at |\\n\s+at |"stack"/, 'no stack anywhere');
}

describe('the start banner', () => {
  let redis: RedisServer | undefined;
  const skip = redisSkip();
  const PASSWORD = 'banner-secret-pw-93';

  before(async () => {
    if (!skip) {
      redis = await startRedis();
      // After the start: the helper's PING would need the password.
      cli(redis.port, 'CONFIG', 'SET', 'requirepass', PASSWORD);
    }
  });
  after(async () => {
    await redis?.stop();
    redis?.remove();
  });

  it('is one JSON line when stdout is not a terminal: every URL, the store redacted, the token', { skip }, async () => {
    const server = await spawnServer(['--store', `redis://:${PASSWORD}@127.0.0.1:${redis?.port ?? 0}/0?prefix=banner`], { DELAYQ_TOKEN: 'tok-1' });
    try {
      const lines = server.logs.filter((line) => line.includes('"delayq listening"'));
      assert.equal(lines.length, 1);
      const banner = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
      const a = server.address;
      assert.equal(banner['api'], `${a}/v1`);
      assert.equal(banner['dashboard'], `${a}/ui/`);
      assert.equal(banner['metrics'], `${a}/metrics`);
      assert.equal(banner['openapi'], `${a}/openapi.json`);
      assert.equal(banner['auth'], true);
      assert.match(String(banner['store']), /^redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/0\?<redacted>$/);
      assert.ok(!server.logs.join('\n').includes(PASSWORD));
      // fastify's own "Server listening at" is not a second banner.
      assert.ok(!server.logs.join('\n').includes('Server listening at'));
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  it('is readable text with --log-format pretty, and the log lines are no JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-banner-'));
    try {
      const { output, address, code } = await serveUntilBanner(['--log-format', 'pretty', '--store', `sqlite:${join(dir, 'q.db')}`, '--no-ui']);
      assert.equal(code, 0);
      assert.match(output, new RegExp(`API +${address}/v1\n`));
      assert.match(output, /dashboard +off \(--no-ui\)/);
      assert.match(output, new RegExp(`metrics +${address}/metrics\n`));
      assert.match(output, new RegExp(`OpenAPI +${address}/openapi.json`));
      assert.match(output, new RegExp(`store +sqlite:${join(dir, 'q.db')}`));
      assert.match(output, /token +none: \/v1 is open to any process on this machine \(loopback only\)/);
      assert.match(output, /INFO: stopping/);
      assert.doesNotMatch(output, /\{"level"/);
      console.log(`# banner as captured:\n${output.replace(/^/gm, '#   ')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is pretty by itself on a terminal (script gives it a pseudo-TTY)', { skip: HAS_SCRIPT ? false : 'util-linux script not installed' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-banner-'));
    try {
      const { output, address } = await serveUntilBanner(['--store', `sqlite:${join(dir, 'q.db')}`], { tty: true });
      assert.match(output, new RegExp(`dashboard +${address}/ui/`));
      assert.doesNotMatch(output, /\{"level"/);
      // And the same command into a pipe logs JSON (the auto format).
      const piped = await spawnServer(['--store', `sqlite:${join(dir, 'q2.db')}`]);
      assert.ok(piped.logs.some((line) => line.startsWith('{"level"')));
      await piped.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pretty logs are redacted', () => {
  it('a push URL query and a store password never reach the pretty output', () => {
    let text = '';
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => ((text += chunk.toString()), done()) });
    const logger = createServerLogger('info', { write: (line: string) => sink.write(line) }, { format: 'pretty' });
    logger.warn({ url: 'https://hooks.example.com/in?token=PUSH-Q-SECRET', store: 'redis://:STORE-PW-SECRET@10.0.0.1:6379/0' }, 'push failed for https://u:USERINFO-SECRET@hooks.example.com/x');
    logger.error({ err: new Error('could not reach redis://:ERR-PW-SECRET@db:6379') }, 'boom');
    assert.match(text, /WARN: push failed for https:\/\/\*\*\*@hooks\.example\.com\/x/);
    assert.match(text, /url: "https:\/\/hooks\.example\.com\/in\?<redacted>"/);
    assert.match(text, /ERROR: boom/);
    for (const secret of ['PUSH-Q-SECRET', 'STORE-PW-SECRET', 'USERINFO-SECRET', 'ERR-PW-SECRET']) assert.ok(!text.includes(secret), `${secret} in:\n${text}`);
    assert.doesNotMatch(text, /^\{/m);
  });

  it('an unknown --log-format is a configuration error naming the flag and the variable', async () => {
    const result = await runCliProcess(['serve', '--port', '0', '--store', 'memory', '--log-format', 'xml']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'delayq serve: invalid configuration: --log-format / DELAYQ_LOG_FORMAT: expected one of auto, json, pretty (got "xml")\n');
  });
});

describe('known start-up failures: one line on stderr, exit code 1, no stack', () => {
  let dir: string;
  let holder: Server;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-start-'));
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second server on the same SQLite file: STORE_LOCKED', async () => {
    const file = join(dir, 'locked.db');
    const first = await spawnServer(['--store', `sqlite:${file}`]);
    try {
      const second = await runCliProcess(['serve', '--port', '0', '--store', `sqlite:${file}`]);
      assertOneLineNoStack(second, /held by another delayq process.*stop the other process, or give this one another --store \(STORE_LOCKED\)$/);
    } finally {
      assert.equal(await first.stop(), 0);
    }
  });

  it('a port in use', async () => {
    const address = holder.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const result = await runCliProcess(['serve', '--host', '127.0.0.1', '--port', String(port), '--store', 'memory']);
    assertOneLineNoStack(result, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use by another process; stop it or choose another port with --port / DELAYQ_PORT$`));
  });

  // Issue 49: a serve that failed on the port had created its SQLite file (and its -wal,
  // -shm and .lock) first. The port is taken before the store is opened, so nothing is
  // created, and a file that existed is not touched.
  it('a port in use, with a SQLite store: no file created, an existing one left as it was', async () => {
    const address = holder.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const fresh = mkdtempSync(join(dir, 'fresh-'));
    const result = await runCliProcess(['serve', '--host', '127.0.0.1', '--port', String(port), '--store', `sqlite:${join(fresh, 'new.db')}`]);
    assertOneLineNoStack(result, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use by another process`));
    assert.deepEqual(readdirSync(fresh), [], 'nothing created');

    // An existing store: made by a server that ran, stopped, then a start that fails on the port.
    const kept = mkdtempSync(join(dir, 'kept-'));
    const file = join(kept, 'q.db');
    const first = await spawnServer(['--store', `sqlite:${file}`]);
    assert.equal(await first.stop(), 0);
    const before = Object.fromEntries(readdirSync(kept).map((name) => [name, { bytes: readFileSync(join(kept, name)).toString('base64'), mtimeMs: statSync(join(kept, name)).mtimeMs }]));
    const again = await runCliProcess(['serve', '--host', '127.0.0.1', '--port', String(port), '--store', `sqlite:${file}`]);
    assertOneLineNoStack(again, /is in use by another process/);
    const after = Object.fromEntries(readdirSync(kept).map((name) => [name, { bytes: readFileSync(join(kept, name)).toString('base64'), mtimeMs: statSync(join(kept, name)).mtimeMs }]));
    assert.deepEqual(after, before, 'the existing files are as they were');
  });

  it('a store URL the store refuses (an unknown Redis option), its password redacted', async () => {
    const result = await runCliProcess(['serve', '--port', '0', '--store', 'redis://:STORE-PW-77@127.0.0.1:1/0?nope=1']);
    assertOneLineNoStack(result, /unknown parameter "nope".*\(INVALID_STORE_URL\)$/);
    assert.ok(!(result.stdout + result.stderr).includes('STORE-PW-77'));
  });

  it('a SQLite file in a directory that does not exist', async () => {
    const result = await runCliProcess(['serve', '--port', '0', '--store', `sqlite:${join(dir, 'missing', 'q.db')}`]);
    assertOneLineNoStack(result, /the directory .*missing does not exist; create it first/);
  });
});

describe('a reader that goes away', () => {
  // `delayq serve | head`: once head exits, every write to stdout fails with EPIPE. The server
  // must still stop on SIGTERM, with its exit code; it hung when its log was flushed at exit.
  it('stops on SIGTERM with exit code 0 after its stdout pipe was closed', async () => {
    const server = await spawnServer(['--store', 'memory']);
    server.child.stdout!.destroy();
    // A request logs nothing by default; the stop logs two lines into the closed pipe.
    const code = await Promise.race([server.stop('SIGTERM'), new Promise<'hung'>((resolve) => setTimeout(resolve, 20_000, 'hung').unref())]);
    if (code === 'hung') server.child.kill('SIGKILL');
    assert.equal(code, 0);
  });
});
