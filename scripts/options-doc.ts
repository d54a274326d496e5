// Writes docs/options.md from the options table (src/core/option-table): `npm run docs:options`.
// test/core/option-table.test.ts fails when the committed file differs from what this writes.
import { readFileSync, writeFileSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { kebab, OPTIONS, storesOf, URL_KINDS, type NamedOption } from '../src/core/option-table/index.js';

export const OPTIONS_DOC = 'docs/options.md';

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (text: string): string => `\`${text}\``;

function typeOf(o: NamedOption): string {
  if (o.type === 'enum') return (o.values ?? []).map(code).join(', ');
  if (o.type !== 'integer' && o.type !== 'number') return o.type;
  const upper = o.maxNote ?? (o.max === undefined || o.max === Number.MAX_SAFE_INTEGER ? null : String(o.max));
  return upper === null ? `${o.type} >= ${o.min ?? 0}` : `${o.type} ${o.min ?? 0} to ${upper}`;
}

function flagOf(o: NamedOption): string {
  if (o.flag === undefined) return '';
  const flag = `--${kebab(o.flag)}`;
  if (o.flag === 'ui') return `${code(flag)}, ${code('--no-ui')}`;
  if (o.flag === 'token') return `${code(flag)} (global)`;
  return code(o.type === 'boolean' ? flag : `${flag} <value>`);
}

function urlOf(o: NamedOption): string {
  if (o.url === undefined) return '';
  const kinds = storesOf(o).filter((k) => URL_KINDS.includes(k));
  return `${code(`?${o.url}=`)} (${kinds.join(', ')})`;
}

function row(o: NamedOption): string {
  const name = o.library ?? o.name;
  const def = o.default === null ? '(none)' : code(String(o.default));
  const cells = [code(name), typeOf(o), def, o.scope.join(', '), flagOf(o), o.env === undefined ? '' : code(o.env), urlOf(o), o.description];
  return `| ${cells.map((c) => cell(c) || '—').join(' | ')} |`;
}

const HEADER = '| Option | Type | Default | Scope | `delayq serve` flag | Variable | URL parameter | Meaning |\n|---|---|---|---|---|---|---|---|';

const SECTIONS: readonly { group: NamedOption['group']; title: string; about: string }[] = [
  { group: 'server', title: 'Server', about: 'Read by `delayq serve` only (docs/service.md). `store` is also DelayQueue.open\'s.' },
  {
    group: 'store',
    title: 'Stores',
    about:
      'Given as `storeOptions` of DelayQueue.open (or openStore\'s second argument), in the store URL\'s query, or by a flag or variable of `delayq serve`. ' +
      'The same option given two ways must agree. One given to a store kind outside its scope is refused: INVALID_OPTION in the library, ' +
      'INVALID_STORE_URL in a URL, and a configuration error (exit code 2) from `delayq serve`.',
  },
  {
    group: 'engine',
    title: 'Engine',
    about:
      'Given to DelayQueue.open (or DelayQueue.start); a bad value is INVALID_OPTION before the queue starts. Those with a flag can be set for `delayq serve`: ' +
      'the task defaults apply to every task scheduled through the server without its own ttrMs, maxAttempts or backoff.',
  },
];

export function renderOptionsDoc(): string {
  const parts = [
    '# Options',
    '',
    'Every option of delayq, each once. This file is generated from the options table in',
    '[src/core/option-table](../src/core/option-table/index.ts) by `npm run docs:options`: edit the table, not this file',
    '(a test fails when they differ). The engine\'s, the stores\' and the server\'s resolvers and `delayq serve --help` read the same table.',
    '',
    '- **Option**: its name in the library (a path in the options of `DelayQueue.open`), or the server\'s own name.',
    '- **Scope**: who reads it: `engine`, `server`, or the store kinds named.',
    '- **`delayq serve` flag** and **Variable**: flags win over variables; both are validated at start, every problem reported at once.',
    `- **URL parameter**: in the store URL's query (${URL_KINDS.join(' and ')} URLs; \`sqlite:<file>\` and \`memory\` take none).`,
    '',
  ];
  for (const section of SECTIONS) {
    parts.push(`## ${section.title}`, '', section.about, '', HEADER);
    for (const option of OPTIONS.filter((o) => o.group === section.group)) parts.push(row(option));
    parts.push('');
  }
  return parts.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const text = renderOptionsDoc();
  if (process.argv.includes('--check')) {
    const same = readFileSync(OPTIONS_DOC, 'utf8') === text;
    if (!same) console.error(`${OPTIONS_DOC} is out of date: npm run docs:options`);
    process.exit(same ? 0 : 1);
  }
  writeFileSync(OPTIONS_DOC, text);
  console.log(`wrote ${OPTIONS_DOC} (${OPTIONS.length} options)`);
}
