// The options table (src/core/option-table) is the one source of docs/options.md, of the
// flags of `delayq serve` and of its --help.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { kebab, SERVE_OPTIONS } from '../../src/core/option-table/index.js';
import { OPTIONS_DOC, renderOptionsDoc } from '../../scripts/options-doc.js';

function serveCommand(): Command {
  const serve = buildProgram().commands.find((command) => command.name() === 'serve');
  assert.ok(serve);
  return serve;
}

describe('the options table as docs and flags', () => {
  it('docs/options.md is what npm run docs:options writes', () => {
    assert.equal(readFileSync(OPTIONS_DOC, 'utf8'), renderOptionsDoc(), 'docs/options.md is out of date: run npm run docs:options');
  });

  it('every flag of delayq serve is a row of the table, and every row with a flag is a flag of serve (--token: the global one)', () => {
    const serve = serveCommand();
    const fromCommander = serve.options.map((option) => option.long).filter((long) => long !== '--no-ui');
    const fromTable = SERVE_OPTIONS.filter((option) => option.flag !== 'token').map((option) => `--${kebab(option.flag ?? '')}`);
    assert.deepEqual([...fromCommander].sort(), [...fromTable].sort());
    const globals = buildProgram().options.map((option) => option.long);
    assert.ok(globals.includes('--token'), 'the table has token; the CLI must have it as a global option');
    // Each takes a value unless the table says boolean.
    for (const option of SERVE_OPTIONS.filter((o) => o.flag !== 'token')) {
      const given = serve.options.find((o) => o.long === `--${kebab(option.flag ?? '')}`);
      assert.equal(given?.required, option.type !== 'boolean', `${option.flag ?? ''}: takes a value unless boolean`);
    }
  });

  it('delayq serve --help names every flag with its variable and default', () => {
    const help = serveCommand().helpInformation().replace(/\s+/g, ' ');
    for (const option of SERVE_OPTIONS.filter((o) => o.flag !== 'token')) {
      assert.ok(help.includes(`--${kebab(option.flag ?? '')}`), `${option.flag ?? ''} missing from --help`);
      assert.ok(help.includes(`[${option.env ?? ''}, default ${option.default === null ? '' : String(option.default)}]`), `${option.env ?? ''} missing from --help`);
    }
  });

  it('the README and docs link docs/options.md', () => {
    assert.match(readFileSync('README.md', 'utf8'), /\(docs\/options\.md\)/);
    assert.match(readFileSync('docs/service.md', 'utf8'), /\(options\.md/);
  });
});
