/** `target` with some members replaced; its other methods run with `target` as `this` (a store with one role's call watched, in the suites and benchmarks). */
export function withMembers<T extends object>(target: T, replaced: Partial<T>): T {
  return new Proxy(target, {
    get(of, property) {
      if (Object.hasOwn(replaced, property)) return replaced[property as keyof T];
      const value: unknown = Reflect.get(of, property, of);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(of) : value;
    },
  });
}
