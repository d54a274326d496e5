// docs/errors.md against the code registries, both ways, and the wire's copies of the registries.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_CODES } from '../../src/core/errors.js';
import { CLI_ERROR_CODES } from '../../src/cli/context.js';
import { CORE_ERROR_STATUS, SERVER_ERROR_CODES } from '../../src/server/errors.js';
import { CLIENT_ERROR_CODES, CORE_ERROR_CODES as WIRE_CORE, SERVER_ERROR_CODES as WIRE_SERVER } from '../../src/wire/error-codes.js';

const sorted = (codes: Iterable<string>): string[] => [...codes].sort();

/** Codes in the first column of the doc's tables, by section heading. */
function documented(): Map<string, { section: string; status: string }> {
  const found = new Map<string, { section: string; status: string }>();
  let section = '';
  for (const line of readFileSync('docs/errors.md', 'utf8').split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    const row = /^\|\s*`([A-Z_]+)`\s*\|\s*([^|]+?)\s*\|/.exec(line);
    if (row) {
      assert.ok(!found.has(row[1]!), `${row[1]} is listed twice`);
      found.set(row[1]!, { section, status: row[2]! });
    }
  }
  return found;
}

describe('error codes', () => {
  const doc = documented();
  const registries = {
    'Library codes': Object.keys(ERROR_CODES),
    'Server codes': Object.keys(SERVER_ERROR_CODES),
    'Client codes': Object.keys(CLIENT_ERROR_CODES),
    'CLI codes': Object.keys(CLI_ERROR_CODES),
  };

  it('docs/errors.md lists every registered code, in its section', () => {
    for (const [section, codes] of Object.entries(registries))
      for (const code of codes) assert.equal(doc.get(code)?.section, section, `${code} missing from "${section}" in docs/errors.md`);
  });

  it('every code in docs/errors.md is registered', () => {
    const all = new Set(Object.values(registries).flat());
    for (const code of doc.keys()) assert.ok(all.has(code), `docs/errors.md lists ${code}, which no registry has`);
  });

  it('the doc shows the status each code is sent with', () => {
    for (const [code, status] of Object.entries(CORE_ERROR_STATUS)) assert.equal(doc.get(code)?.status, String(status), code);
    for (const [code, { status }] of Object.entries(SERVER_ERROR_CODES)) assert.equal(doc.get(code)?.status, String(status), code);
  });

  it("the wire's lists match the registries (the client cannot import them)", () => {
    assert.deepEqual(sorted(WIRE_CORE), sorted(Object.keys(ERROR_CODES)));
    assert.deepEqual(sorted(WIRE_SERVER), sorted(Object.keys(SERVER_ERROR_CODES)));
  });

  it('no code is registered twice, and every library code has a status', () => {
    const all = Object.values(registries).flat();
    assert.equal(new Set(all).size, all.length);
    assert.deepEqual(sorted(Object.keys(CORE_ERROR_STATUS)), sorted(Object.keys(ERROR_CODES)));
    for (const status of [...Object.values(CORE_ERROR_STATUS), ...Object.values(SERVER_ERROR_CODES).map((s) => s.status)])
      assert.ok([400, 401, 404, 409, 413, 415, 429, 500, 503].includes(status), String(status));
  });
});
