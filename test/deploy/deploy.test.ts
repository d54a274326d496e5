// docs/deploy.md, checked: the systemd unit (systemd-analyze verify, and its ExecStart flags
// start a real server), and the SQLite and PostgreSQL backup and restore commands it
// documents, run while the server serves the store.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { DelayQClient } from '../../src/client/index.js';
import { dropSchema, freshSchema, PG_URL, storeUrl } from '../helpers/postgres.js';
import { spawnServer } from '../helpers/service-process.js';

const root = resolve(import.meta.dirname, '../..');
const UNIT = join(root, 'deploy', 'delayq.service');
const work = mkdtempSync(join(tmpdir(), 'delayq-deploy-'));
after(() => rmSync(work, { recursive: true, force: true }));

const has = (command: string, ...args: string[]): boolean => spawnSync(command, args, { stdio: 'ignore' }).status === 0;
const HAS_SYSTEMD_ANALYZE = has('systemd-analyze', '--version');
const HAS_SQLITE3 = has('sqlite3', '--version');
const HAS_PG_DUMP = has('pg_dump', '--version') && has('pg_restore', '--version') && has('psql', '--version');

/** The unit's ExecStart, as words. */
function execStart(): string[] {
  const line = readFileSync(UNIT, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('ExecStart='));
  assert.ok(line !== undefined, 'the unit has an ExecStart');
  return line.slice('ExecStart='.length).trim().split(/\s+/);
}

describe('deploy/delayq.service', () => {
  it('passes systemd-analyze verify without a warning', { skip: HAS_SYSTEMD_ANALYZE ? false : 'systemd-analyze not installed' }, () => {
    // verify checks that ExecStart's binary exists: the unit names /usr/local/bin/delayq, which
    // this machine need not have, so a copy names an executable that does.
    const binary = join(work, 'delayq');
    writeFileSync(binary, '#!/bin/sh\n');
    chmodSync(binary, 0o755);
    const copy = join(work, 'delayq.service');
    writeFileSync(copy, readFileSync(UNIT, 'utf8').replace('/usr/local/bin/delayq', binary));
    const result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr.trim(), '', 'no warning (unknown keys, bad values are only warnings)');
    // Graceful stop: SIGTERM, and systemd waits longer than the server's own shutdown timeout.
    const unit = readFileSync(UNIT, 'utf8');
    assert.match(unit, /^KillSignal=SIGTERM$/m);
    const stopSec = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
    const shutdownMs = Number(/--shutdown-timeout-ms (\d+)/.exec(unit)?.[1]);
    assert.ok(stopSec * 1000 > shutdownMs, `TimeoutStopSec ${stopSec} s > --shutdown-timeout-ms ${shutdownMs}`);
  });

  it("its ExecStart flags start a real server, which stops with code 0 on SIGTERM", async () => {
    const [binary, command, ...flags] = execStart();
    assert.equal(binary, '/usr/local/bin/delayq');
    assert.equal(command, 'serve');
    // Here: a file of this test and any free port, instead of /var/lib/delayq and 7420.
    const args = flags.map((flag, i) => (flags[i - 1] === '--store' ? `sqlite:${join(work, 'unit.db')}` : flags[i - 1] === '--port' ? '0' : flag));
    const server = await spawnServer(args);
    assert.equal((await fetch(`${server.address}/readyz`)).status, 200);
    assert.equal(await server.stop('SIGTERM'), 0);
  });
});

describe('SQLite backup and restore, as docs/deploy.md says', { skip: HAS_SQLITE3 ? false : 'sqlite3 (the command-line shell) not installed' }, () => {
  it('backs up while serving; the restored file has the tasks of the backup, and not the later ones', async () => {
    const db = join(work, 'live.db');
    const backup = join(work, 'backup.db');
    const server = await spawnServer(['--store', `sqlite:${db}`]);
    const client = new DelayQClient({ url: server.address });
    try {
      for (let i = 0; i < 50; i++) await client.schedule({ id: `before-${i}`, topic: 'backup', payload: { i }, delayMs: 3_600_000 });
      // The documented online backup: the sqlite3 shell's .backup (SQLite's backup API), while delayq runs.
      execFileSync('sqlite3', [db, `.backup '${backup}'`]);
      assert.equal(execFileSync('sqlite3', [backup, 'PRAGMA integrity_check']).toString().trim(), 'ok');
      await client.schedule({ id: 'after-backup', topic: 'backup', payload: null, delayMs: 3_600_000 });
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }

    // The documented restore: stopped, the old file and its -wal / -shm removed, the backup copied in.
    for (const file of [db, `${db}-wal`, `${db}-shm`]) rmSync(file, { force: true });
    copyFileSync(backup, db);
    assert.ok(!existsSync(`${db}-wal`));

    const restored = await spawnServer(['--store', `sqlite:${db}`]);
    const again = new DelayQClient({ url: restored.address });
    try {
      for (const id of ['before-0', 'before-25', 'before-49']) assert.equal((await again.get(id))?.state, 'pending', id);
      assert.equal(await again.get('after-backup'), null);
      const stats = await again.stats();
      assert.equal(stats.counts.pending, 50);
    } finally {
      assert.equal(await restored.stop('SIGTERM'), 0);
    }
  });
});

describe('PostgreSQL backup and restore, as docs/deploy.md says', { skip: HAS_PG_DUMP ? false : 'pg_dump / pg_restore not installed' }, () => {
  it('pg_dump while serving; after DROP SCHEMA and pg_restore the schema has the tasks of the dump, and not the later ones', async () => {
    const schema = freshSchema('backup');
    const dump = join(work, 'pg.dump');
    const store = storeUrl(schema);
    try {
      const server = await spawnServer(['--store', store]);
      const client = new DelayQClient({ url: server.address });
      try {
        for (let i = 0; i < 20; i++) await client.schedule({ id: `before-${i}`, topic: 'backup', payload: { i }, delayMs: 3_600_000 });
        // The documented backup, while delayq serves.
        execFileSync('pg_dump', ['--format=custom', `--schema=${schema}`, `--file=${dump}`, PG_URL]);
        await client.schedule({ id: 'after-backup', topic: 'backup', payload: null, delayMs: 3_600_000 });
      } finally {
        assert.equal(await server.stop('SIGTERM'), 0);
      }

      // The documented restore: delayq stopped, the schema dropped, the dump restored.
      execFileSync('psql', [PG_URL, '-v', 'ON_ERROR_STOP=1', '-c', `DROP SCHEMA "${schema}" CASCADE`]);
      execFileSync('pg_restore', [`--dbname=${PG_URL}`, dump]);

      const restored = await spawnServer(['--store', store]);
      const again = new DelayQClient({ url: restored.address });
      try {
        for (const id of ['before-0', 'before-10', 'before-19']) assert.equal((await again.get(id))?.state, 'pending', id);
        assert.equal(await again.get('after-backup'), null);
        assert.equal((await again.stats()).counts.pending, 20);
      } finally {
        assert.equal(await restored.stop('SIGTERM'), 0);
      }
    } finally {
      await dropSchema(schema);
    }
  });
});
