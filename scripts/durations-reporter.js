// A node:test reporter for `run-tests.ts --record-durations`: one JSON object, the seconds
// each test file took (its path from the repository's root), start-up included. node --test
// runs each file as one test named by the file's path, and reports its end as test:complete
// with the file's whole duration (tests defined in a helper, as the conformance suites are,
// name the helper as their file, so their own events cannot say which file ran them).
// Plain JavaScript: node --test loads its reporters before the tsx hooks that read TypeScript.
import { relative } from 'node:path';
import { cwd } from 'node:process';

/** @param {AsyncIterable<import('./durations-reporter.js').TestEvent>} source */
export default async function* durationsReporter(source) {
  /** @type {Map<string, number>} */
  const seconds = new Map();
  for await (const { type, data } of source) {
    if (type !== 'test:complete' || data?.nesting !== 0 || data.file === undefined || data.name !== data.file) continue;
    seconds.set(relative(cwd(), data.file).split('\\').join('/'), (data.details?.duration_ms ?? 0) / 1000);
  }
  yield `${JSON.stringify(Object.fromEntries(seconds))}\n`;
}
