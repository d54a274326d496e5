// The registry of store kinds is the one list: what it says holds for the stores it opens,
// the server's --store check and docs/stores.md.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseServerConfig } from '../../src/server/config.js';
import { openStore } from '../../src/stores/open-store.js';
import { STORE_KINDS, storeKindOf } from '../../src/stores/kinds.js';

describe('the registry of store kinds', () => {
  it('names the kind of every store URL, and none of a URL of no kind', () => {
    const cases: [string, string | undefined][] = [
      ['memory', 'memory'],
      ['memory:', 'memory'],
      ['sqlite:./x.db', 'sqlite'],
      ['redis://127.0.0.1:6379', 'redis'],
      ['rediss://h:6380/1', 'redis'],
      ['redis+cluster://h:1,h:2', 'redis'],
      ['postgres://u@h:5432/db', 'postgres'],
      ['postgresql://u@h/db?schema=s', 'postgres'],
      ['memoryx', undefined],
      ['mysql://x', undefined],
      ['', undefined],
    ];
    for (const [spec, kind] of cases) assert.equal(storeKindOf(spec)?.name, kind, spec);
  });

  it('the server takes every kind\'s URL and refuses others, naming every kind', () => {
    const config = (store: string): unknown => parseServerConfig({ store }, {});
    for (const spec of ['memory', 'sqlite:./d.db', 'redis://127.0.0.1:1', 'redis+cluster://127.0.0.1:1', 'postgres://u@127.0.0.1:1/db']) assert.doesNotThrow(() => config(spec), spec);
    for (const spec of ['mysql://x', 'sqlite:', 'redis://'])
      assert.throws(
        () => config(spec),
        (error: Error) => STORE_KINDS.every((kind) => error.message.includes(kind.usage)),
        spec,
      );
  });

  it('stores of one-process kinds have no shared part; the memory store keeps the run timers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-kinds-'));
    try {
      for (const spec of ['memory', `sqlite:${join(dir, 'k.db')}`]) {
        const store = await openStore(spec);
        try {
          assert.equal(store.coordination !== null, storeKindOf(spec)?.shared, spec);
          assert.equal(store.tasks.runTimers !== undefined, spec === 'memory', spec);
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('docs/stores.md has a row for every kind, with its driver', () => {
    const doc = readFileSync('docs/stores.md', 'utf8');
    for (const kind of STORE_KINDS) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${kind.name}\` |`));
      assert.ok(row !== undefined, `no row for ${kind.name}`);
      assert.ok(row.includes(kind.driver === null ? 'none' : `\`${kind.driver}\``), row);
      for (const scheme of kind.schemes) assert.ok(row.includes(scheme), `${kind.name}: ${scheme}`);
    }
  });
});
