/**
 * What one option is: its type, default, bounds, who reads it (scope) and how it is given
 * (library path, `delayq serve` flag, environment variable, store URL parameter). The rows
 * live in engine.ts, stores.ts and server.ts; index.ts joins them into the one table that
 * the resolvers, the CLI, `delayq serve --help` and docs/options.md all read.
 *
 * Pure data and pure functions: no I/O (src/core).
 */

/** The store kinds, by the names of src/stores/kinds.ts (test/core/option-table.test.ts keeps them equal). */
export type StoreKindScope = 'memory' | 'sqlite' | 'redis' | 'postgres';
/** Who reads an option: the engine, the server, or the store kinds named. */
export type Scope = 'engine' | 'server' | StoreKindScope;
export type OptionType = 'integer' | 'number' | 'boolean' | 'string' | 'enum' | 'list';
export type OptionValue = number | string | boolean | readonly string[];

export interface OptionSpec {
  /**
   * Where the library takes it: a path in DelayQueue.open's options (`retentionMs`,
   * `defaults.ttrMs`, `storeOptions.prefix`), or null for an option only the server reads.
   */
  readonly library: string | null;
  readonly type: OptionType;
  /** The value when none is given; null: none (the option is off or absent). */
  readonly default: number | string | boolean | null;
  /** Integers and numbers: the inclusive bounds. */
  readonly min?: number;
  readonly max?: number;
  /** A bound that depends on another option, shown instead of `max` (e.g. "limits.maxTtrMs"). */
  readonly maxNote?: string;
  /** enum: the values taken. */
  readonly values?: readonly string[];
  readonly scope: readonly Scope[];
  /** The `delayq serve` flag, as commander names it (camelCase: maxBatch is --max-batch). */
  readonly flag?: string;
  readonly env?: string;
  /** The store URL's query parameter (on the kinds of its scope whose URLs take a query: URL_KINDS). */
  readonly url?: string;
  readonly description: string;
}

/** The store kinds whose URLs carry options in their query (sqlite:<file> and memory take none). */
export const URL_KINDS: readonly StoreKindScope[] = ['redis', 'postgres'];

export const STORE_SCOPES: readonly StoreKindScope[] = ['memory', 'sqlite', 'redis', 'postgres'];

export function isStoreScope(scope: Scope): scope is StoreKindScope {
  return (STORE_SCOPES as readonly string[]).includes(scope);
}

/** The store kinds that read an option (empty for an engine or server option). */
export function storesOf(spec: OptionSpec): StoreKindScope[] {
  return spec.scope.filter(isStoreScope);
}

/** --max-batch for maxBatch. */
export function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** "an integer from 1 to 65535", "NORMAL or FULL": what a value must be, for messages and docs. */
export function expected(spec: OptionSpec): string {
  const upper = spec.maxNote ?? (spec.max === undefined || spec.max === Number.MAX_SAFE_INTEGER ? null : String(spec.max));
  switch (spec.type) {
    case 'integer':
    case 'number': {
      const kind = spec.type === 'integer' ? 'an integer' : 'a number';
      if (upper === null) return `${kind} >= ${spec.min ?? 0}`;
      return `${kind} from ${spec.min ?? 0} to ${upper}`;
    }
    case 'boolean':
      return '1/true or 0/false';
    case 'enum': {
      const values = spec.values ?? [];
      return values.length === 2 ? values.join(' or ') : `one of ${values.join(', ')}`;
    }
    case 'list':
      return 'a comma-separated list';
    case 'string':
      return 'a string';
  }
}

const TRUE = /^(1|true|yes|on)$/i;
const FALSE = /^(0|false|no|off|)$/i;

/**
 * A value given as text (a flag, a variable, a URL parameter) read by its row: the value, or
 * what was expected. Numbers are checked against the row's bounds (a bound that depends on
 * another option, `maxNote`, is the resolver's to check).
 */
export function parseOptionText(spec: OptionSpec, text: string): { readonly value: OptionValue } | { readonly problem: string } {
  const wrong = { problem: `expected ${expected(spec)} (got "${text.slice(0, 200)}")` };
  switch (spec.type) {
    case 'integer':
    case 'number': {
      const pattern = spec.type === 'integer' ? /^\d+$/ : /^\d+(\.\d+)?$/;
      const n = pattern.test(text) ? Number(text) : Number.NaN;
      return inBounds(spec, n) ? { value: n } : wrong;
    }
    case 'boolean':
      if (TRUE.test(text)) return { value: true };
      if (FALSE.test(text)) return { value: false };
      return wrong;
    case 'enum':
      return (spec.values ?? []).includes(text) ? { value: text } : wrong;
    case 'list':
      return { value: text.split(',').map((part) => part.trim()).filter((part) => part.length > 0) };
    case 'string':
      return { value: text };
  }
}

/** Whether `n` is a value the row's type and fixed bounds take. */
export function inBounds(spec: OptionSpec, n: number): boolean {
  if (!Number.isFinite(n) || (spec.type === 'integer' && !Number.isSafeInteger(n))) return false;
  return n >= (spec.min ?? Number.NEGATIVE_INFINITY) && (spec.maxNote !== undefined || n <= (spec.max ?? Number.POSITIVE_INFINITY));
}
