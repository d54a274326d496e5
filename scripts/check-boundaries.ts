// Keeps the architecture's import rules true (docs/architecture.md: the layers, and docs/stores.md: what a store may import):
//   src/core      imports nothing outside src/core, and no node: built-ins or packages (no I/O);
//   src/engine    imports src/core and itself only: it knows stores by their ports (src/core/ports/),
//                 and opening one by URL is the composition root's job (src/open-queue.ts);
//   src/stores/X  never imports another store; what stores share lives in src/stores/shared,
//                 which imports only src/core, src/coordination, itself and node: built-ins (no driver);
//   src/coordination  the protocol between processes sharing a store (leases, timer routing,
//                 promotion, wake-ups, recovery) over a backend's primitives: imports only
//                 src/core and itself, no package and no node: built-in, and reads no clock;
//                 stores import it, the engine never (it sees the port, src/core/ports/);
//   src/client    imports only src/client and src/wire (no server, engine or store in its graph);
//   src/cli       never imports src/engine or a store (it talks to a server through the client),
//                 but for src/stores/open-store.ts, only dynamically, for `migrate`;
//                 of src/server it imports the settings table, and the server itself only
//                 dynamically, for `serve` (a static import cost every command ~0.3 s);
//   src/push      (push delivery's HTTP side: transport, signing, SSRF guard) imports src/core,
//                 itself and packages only: never the engine, a store or the server, which
//                 reach it through the PushTransport port (src/core/push.ts);
//   src/stores    (and src/coordination) read no clock and set no timer: no Date.now(), new Date(), performance.now(),
//                 process.hrtime, setTimeout/setInterval/setImmediate or their clears, no
//                 node:timers or node:perf_hooks; time and timers come from the Clock a store
//                 is handed (src/core/ports/). Exempt: src/stores/system-clock.ts, the
//                 default Clock openStore hands a store when its caller gives none;
//   store drivers  better-sqlite3 and ioredis are imported only by their store, and a store
//                 that has a driver only by src/stores/open-store.ts, with import(): a process
//                 loads a driver only when it opens that store (docs/adr/0002-store-drivers.md).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { STORE_KINDS } from '../src/stores/kinds.js';

const root = resolve('src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function area(file: string): string {
  const parts = relative(root, file).split(sep);
  if (parts[0] === 'stores' && parts.length > 2) return `stores/${parts[1]}`;
  return parts.length > 1 ? (parts[0] ?? '') : '';
}

/** Each driver package, by the store that alone may import it. */
const DRIVER_OF_STORE: Readonly<Record<string, string>> = Object.fromEntries(
  STORE_KINDS.flatMap((kind) => (kind.driver === null ? [] : [[`stores/${kind.name}`, kind.driver]])),
);
const openStore = join(root, 'stores', 'open-store.ts');

const violations: string[] = [];
for (const file of walk(root)) {
  const from = area(file);
  const source = readFileSync(file, 'utf8');
  const { importedFiles } = ts.preProcessFile(source, true, true);
  for (const { fileName: spec } of importedFiles) {
    const relative_ = spec.startsWith('.');
    const target = relative_ ? area(resolve(dirname(file), spec)) : `package:${spec}`;
    const where = `${relative(process.cwd(), file)} imports '${spec}'`;
    if (from === 'core' && target !== 'core') violations.push(`${where}: src/core must stay pure`);
    if (from === 'engine' && relative_ && target !== 'engine' && target !== 'core')
      violations.push(`${where}: the engine depends on ports only (src/core), never on a store, the server or the wire`);
    if (from.startsWith('stores/') && target.startsWith('stores/') && target !== from && target !== 'stores/shared')
      violations.push(`${where}: stores never import each other (what they share lives in src/stores/shared)`);
    if (from === 'stores/shared' && relative_ && target !== 'stores/shared' && target !== 'core' && target !== 'coordination')
      violations.push(`${where}: src/stores/shared imports only src/core, src/coordination and itself: it is the driver-free part every store reuses`);
    if (from === 'coordination' && (relative_ ? target !== 'coordination' && target !== 'core' : true))
      violations.push(`${where}: src/coordination imports only src/core and itself (no store, no package: a backend brings the driver)`);
    if (from === 'stores/shared' && !relative_ && !spec.startsWith('node:'))
      violations.push(`${where}: src/stores/shared uses no package (no driver)`);
    if (from === 'push' && relative_ && target !== 'push' && target !== 'core')
      violations.push(`${where}: src/push imports only src/core and packages (the engine reaches it through the PushTransport port)`);
    if (from === 'client' && relative_ && target !== 'client' && target !== 'wire')
      violations.push(`${where}: the client imports only src/client and src/wire`);
    if (from === 'cli' && (target === 'engine' || (target.startsWith('stores') && !/stores\/(open-store|kinds)\.js$/.test(spec)) || (target === 'server' && !/server\/(main|config)\.js$/.test(spec))))
      violations.push(`${where}: the CLI talks to a server through the client`);
  }
  for (const [store, driver] of Object.entries(DRIVER_OF_STORE)) {
    if (from !== store && importedFiles.some(({ fileName }) => fileName === driver || fileName.startsWith(`${driver}/`)))
      violations.push(`${relative(process.cwd(), file)} imports ${driver}: only src/${store} may`);
    const reaches = importedFiles.some(({ fileName }) => fileName.startsWith('.') && area(resolve(dirname(file), fileName)) === store);
    if (reaches && from !== store && (file !== openStore || new RegExp(`^import\\s[^;]*from\\s+['"]\\./${store.slice('stores/'.length)}/`, 'm').test(source)))
      violations.push(`${relative(process.cwd(), file)} imports src/${store}: only src/stores/open-store.ts may, with import(), so that ${driver} loads when that store opens`);
  }
  if (from === 'cli' && /^import\s[^;]*from\s+['"][^'"]*server\/main\.js['"]/m.test(source))
    violations.push(`${relative(process.cwd(), file)} imports the server statically: load it with import() in the serve command`);
  if (from === 'cli' && /^import\s(?!type\s)[^;]*from\s+['"][^'"]*stores\/open-store\.js['"]/m.test(source))
    violations.push(`${relative(process.cwd(), file)} imports the stores statically: load them with import() in the migrate command`);
}

// --- stores read no clock -----------------------------------------------------------
const TIMER_CALLS = new Set(['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate']);
const CLOCK_READS = new Set(['Date.now', 'performance.now', 'process.hrtime', 'process.hrtime.bigint', 'performance.timeOrigin']);
const CLOCK_MODULES = new Set(['node:timers', 'node:timers/promises', 'node:perf_hooks', 'timers', 'timers/promises', 'perf_hooks']);
const storesClockExempt = join(root, 'stores', 'system-clock.ts');

/** Each place `file` reads wall time or touches a timer, as "line: what" (code only: comments and strings never match). */
function clockUses(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string): void => {
    found.push(`${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && TIMER_CALLS.has(node.text) && !(ts.isPropertyAssignment(node.parent) && node.parent.name === node) && !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node))
      at(node, node.text);
    else if (ts.isPropertyAccessExpression(node) && CLOCK_READS.has(node.getText(sf).replace(/\s+/g, ''))) at(node, node.getText(sf));
    else if (ts.isPropertyAccessExpression(node) && TIMER_CALLS.has(node.name.text) && /^(globalThis|global)$/.test(node.expression.getText(sf))) at(node, node.getText(sf));
    else if (ts.isNewExpression(node) && node.expression.getText(sf) === 'Date' && (node.arguments?.length ?? 0) === 0) at(node, 'new Date()');
    else if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && CLOCK_MODULES.has(node.moduleSpecifier.text))
      at(node, `import '${node.moduleSpecifier.text}'`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

for (const file of [...walk(join(root, 'stores')), ...walk(join(root, 'coordination'))]) {
  if (file === storesClockExempt) continue;
  for (const use of clockUses(file, readFileSync(file, 'utf8')))
    violations.push(`${relative(process.cwd(), file)}:${use}: stores and coordination read no clock; take the Clock they are handed`);
}

if (violations.length > 0) {
  console.error(`boundary check failed:\n  ${violations.join('\n  ')}`);
  process.exit(1);
}
console.log('boundaries ok');
