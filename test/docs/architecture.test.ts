/** docs/architecture.md names every folder under src/ in its table of folders (issue 50). */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

function folders(dir: string): string[] {
  const found = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) found.push(...folders(join(dir, entry.name)));
  return found;
}

describe('docs/architecture.md', () => {
  it('has a row for every folder under src/', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const rows = new Set([...doc.matchAll(/^\| `(src\/[^`]*)` \|/gm)].map((m) => m[1]!.replace(/\/$/, '')));
    const missing = folders(join(ROOT, 'src'))
      .map((dir) => relative(ROOT, dir).split('\\').join('/'))
      .filter((dir) => !rows.has(dir));
    assert.deepEqual(missing, [], 'folders with no row in the table of "The folders"');
  });

  it('names no folder that does not exist', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const existing = new Set(folders(join(ROOT, 'src')).map((dir) => relative(ROOT, dir).split('\\').join('/')));
    const stale = [...doc.matchAll(/^\| `(src\/[^`]*)` \|/gm)].map((m) => m[1]!.replace(/\/$/, '')).filter((dir) => !existing.has(dir));
    assert.deepEqual(stale, []);
  });
});
