/**
 * The lint rule that keeps names from outside away from Object.prototype
 * (scripts/lint/no-prototype-keys.js): it refuses a plain object indexed by a string that is
 * not a literal, and `name in object`, and lets Maps, arrays, `Dict`s and literal keys be.
 * Run on small files in a temporary project, with the type checker, as `npm run lint` runs it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
// @ts-expect-error -- a plain JS module of the lint configuration, without types
import { plugin } from '../../scripts/lint/no-prototype-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'delayq-lint-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'dict.ts'), `export { dict, own, type Dict } from ${JSON.stringify(resolve('src/core/dict.js'))};\n`);

const compilerOptions = { strict: true, target: 'ES2022', module: 'NodeNext', noUncheckedIndexedAccess: true, skipLibCheck: true };
let files = 0;
async function problems(code: string): Promise<string[]> {
  const name = `probe${files++}`;
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, `import { dict, own, type Dict } from './dict.js';\nvoid dict; void own;\nexport type D = Dict<number>;\n${code}\n`);
  // A project of its own for every probe: typescript-eslint keeps the program of a tsconfig
  // between lints, and whether it sees a file written after that program was built depends on
  // the directory's timestamps, so one shared tsconfig made this test fail now and then.
  const project = join(dir, `${name}.tsconfig.json`);
  writeFileSync(project, JSON.stringify({ compilerOptions, files: [`${name}.ts`, 'dict.ts'] }));
  const eslint = new ESLint({
    cwd: dir,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser, parserOptions: { project, tsconfigRootDir: dir } },
        plugins: { delayq: plugin as never },
        rules: { 'delayq/no-prototype-keys': 'error' },
      },
    ],
  });
  const [result] = await eslint.lintFiles([file]);
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message.slice(0, 200)}`);
}

describe('lint rule delayq/no-prototype-keys', () => {
  it('refuses a plain object indexed or tested by a string from outside', async () => {
    for (const code of [
      'export function f(topic: string) { const counts: Record<string, number> = {}; counts[topic] = 1; return counts; }',
      'export function f(topic: string, limits: Readonly<Record<string, number>>) { return limits[topic]; }',
      'export function f(topic: string) { const o: Record<string, { n?: number }> = {}; (o[topic] ??= {}).n = 1; return o; }',
      'export function f(topic: string, o: Record<string, number>) { return topic in o; }',
      'const UNITS: Record<string, number> = { s: 1 }; export const f = (unit: `${string}s`) => UNITS[unit];',
    ])
    {
      const found = await problems(code);
      assert.equal(found.filter((p) => p.startsWith('delayq/no-prototype-keys')).length, 1, `${code}\n${found.join('\n')}`);
    }
  });

  it('lets Maps, arrays, Dicts, own() and literal keys be', async () => {
    for (const code of [
      'export function f(topic: string) { const m = new Map<string, number>(); m.set(topic, 1); return m.get(topic); }',
      'export function f(i: number, a: string[]) { return a[i]; }',
      'export function f(topic: string) { const d = dict<number>(); d[topic] = 1; return d[topic]; }',
      'export function f(topic: string, r: Record<string, number>) { return own(r, topic); }',
      "export function f(o: Record<string, number>) { return o['fixed']; }",
      "export function f(k: 'a' | 'b', o: Record<'a' | 'b', number>) { return o[k]; }",
      'export function f(topic: string, d: Readonly<Dict<number>>) { return topic in d ? d[topic] : 0; }',
    ])
      assert.deepEqual(await problems(code), [], code);
  });
});
