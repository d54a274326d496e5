/**
 * `-- @include name` lines, replaced by the text of the file they name: how the stores that
 * keep their code in files of the server's language write a shared piece once. The Redis
 * store's Lua scripts (redis/scripts.ts) and the PostgreSQL store's statements
 * (postgres/statements.ts) both use `--` for comments, so one syntax serves both.
 *
 * `once`: an include is inlined only where first met (Lua: an include defines functions, and
 * one definition is enough); otherwise wherever it is named (SQL: an include is a piece of a
 * statement, such as a column list).
 */
const INCLUDE = /^--\s*@include\s+([a-z0-9-]+)\s*$/gm;

export function resolveIncludes(source: string, readInclude: (name: string) => string, once = true, seen = new Set<string>()): string {
  // An include may include others; a cycle is an error of the files, reported instead of a stack overflow.
  return source.replace(INCLUDE, (_line, name: string) => {
    if (seen.has(name)) {
      if (once) return '';
      throw new Error(`include "${name}" includes itself`);
    }
    const inner = once ? seen : new Set(seen);
    inner.add(name);
    const text = resolveIncludes(readInclude(name), readInclude, once, inner);
    if (once) seen.add(name);
    return `-- begin include ${name}\n${text}\n-- end include ${name}`;
  });
}
