// npm run bench [-- name ...]: runs the named benchmarks (all when none is named).
// Each lives in bench/<name>.bench.ts and exports `run(args: string[]): Promise<void>`.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = import.meta.dirname;
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const [first, ...rest] = process.argv.slice(2);
const names = first === undefined ? available : [first];
for (const name of names) {
  const file = join(dir, `${name}.bench.ts`);
  if (!existsSync(file)) {
    console.error(`unknown benchmark "${name}"; available: ${available.join(', ')}`);
    process.exit(2);
  }
  const mod = (await import(pathToFileURL(file).href)) as { run: (args: string[]) => Promise<void> };
  console.log(`\n## benchmark: ${name}`);
  await mod.run(rest);
}
