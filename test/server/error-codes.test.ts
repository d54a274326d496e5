/**
 * Each error code is written once, with its meaning, in the registry of the layer that raises
 * it: ERROR_CODES (src/core/errors.ts, the library), SERVER_ERROR_CODES and CORE_ERROR_STATUS
 * (src/server/errors.ts, the HTTP layer), CLIENT_ERROR_CODES (src/wire/error-codes.ts, made up
 * by the client) and CLI_ERROR_CODES (src/cli/context.ts). The copies are checked against them
 * here: the client's lists of wire codes (src/wire/error-codes.ts, since the client may import
 * only src/client and src/wire) and docs/errors.md, both ways, with each code's status and meaning.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_CODES, type ErrorCode } from '../../src/core/errors.js';
import { CLI_ERROR_CODES } from '../../src/cli/context.js';
import { CORE_ERROR_STATUS, SERVER_ERROR_CODES } from '../../src/server/errors.js';
import {
  CLIENT_ERROR_CODES,
  CORE_ERROR_CODES as WIRE_CORE,
  SERVER_ERROR_CODES as WIRE_SERVER,
  type CoreErrorCode,
  type ServerErrorCode,
} from '../../src/wire/error-codes.js';

const sorted = (codes: Iterable<string>): string[] => [...codes].sort();

// The same check at compile time: `npm run typecheck` fails when a copy's type drifts.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const coreCopyIsExact: Same<CoreErrorCode, ErrorCode> = true;
const serverCopyIsExact: Same<ServerErrorCode, keyof typeof SERVER_ERROR_CODES> = true;

interface DocRow {
  readonly section: string;
  readonly status: string;
  readonly meaning: string;
}

/** The rows of the doc's tables (code, status, meaning), by section heading. */
function documented(): Map<string, DocRow> {
  const found = new Map<string, DocRow>();
  let section = '';
  for (const line of readFileSync('docs/errors.md', 'utf8').split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    const row = /^\|\s*`([A-Z_]+)`\s*\|\s*([^|]+?)\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (row) {
      assert.ok(!found.has(row[1]!), `${row[1]} is listed twice`);
      found.set(row[1]!, { section, status: row[2]!, meaning: row[3]! });
    }
  }
  return found;
}

/** Every code's meaning, from its registry. */
const MEANINGS: ReadonlyMap<string, string> = new Map<string, string>([
  ...Object.entries(ERROR_CODES),
  ...Object.entries(SERVER_ERROR_CODES).map(([code, { description }]): [string, string] => [code, description]),
  ...Object.entries(CLIENT_ERROR_CODES),
  ...Object.entries(CLI_ERROR_CODES),
]);

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

  it('the doc gives each code the meaning its registry does', () => {
    for (const [code, meaning] of MEANINGS) assert.equal(doc.get(code)?.meaning, meaning, code);
  });

  it("the client's lists of wire codes are the registries' codes, each once", () => {
    assert.ok(coreCopyIsExact && serverCopyIsExact);
    assert.deepEqual(sorted(WIRE_CORE), sorted(Object.keys(ERROR_CODES)));
    assert.deepEqual(sorted(WIRE_SERVER), sorted(Object.keys(SERVER_ERROR_CODES)));
    assert.equal(new Set(WIRE_CORE).size, WIRE_CORE.length);
    assert.equal(new Set(WIRE_SERVER).size, WIRE_SERVER.length);
  });

  it('no code is registered twice, and every library code has a status', () => {
    const all = Object.values(registries).flat();
    assert.equal(new Set(all).size, all.length);
    assert.deepEqual(sorted(Object.keys(CORE_ERROR_STATUS)), sorted(Object.keys(ERROR_CODES)));
    for (const status of [...Object.values(CORE_ERROR_STATUS), ...Object.values(SERVER_ERROR_CODES).map((s) => s.status)])
      assert.ok([400, 401, 403, 404, 408, 409, 413, 414, 415, 421, 429, 431, 500, 503].includes(status), String(status));
  });
});
