/**
 * The options table: every option of delayq once (engine.ts, stores.ts, server.ts). Read by
 * the engine's resolvers (core/options.ts), the stores' (their URL parsers and openStore's
 * scope check), the server's configuration and `delayq serve`'s flags and help, and
 * scripts/options-doc.ts, which writes docs/options.md.
 */
import { ENGINE_OPTIONS } from './engine.js';
import type { OptionSpec, StoreKindScope } from './spec.js';
import { SERVER_OPTIONS } from './server.js';
import { STORE_OPTIONS } from './stores.js';

export { ENGINE_OPTIONS } from './engine.js';
export { SERVER_OPTIONS } from './server.js';
export { STORE_OPTIONS, type StoreOptionName } from './stores.js';
export * from './spec.js';

export interface NamedOption extends OptionSpec {
  /** The row's name: its library path without the group (`horizonMs`), or the server option's flag. */
  readonly name: string;
  readonly group: 'server' | 'engine' | 'store';
}

const rows = (group: NamedOption['group'], table: Readonly<Record<string, OptionSpec>>): NamedOption[] =>
  Object.entries(table).map(([name, spec]) => ({ ...spec, name, group }));

/** Every option, in the order of docs/options.md and `delayq serve --help`: server, store, engine. */
export const OPTIONS: readonly NamedOption[] = [...rows('server', SERVER_OPTIONS), ...rows('store', STORE_OPTIONS), ...rows('engine', ENGINE_OPTIONS)];

/** The options with a `delayq serve` flag. */
export const SERVE_OPTIONS: readonly NamedOption[] = OPTIONS.filter((option) => option.flag !== undefined);

/** A number row's default, for the resolvers (the table's types keep numbers as numbers). */
export function numberDefault(spec: OptionSpec): number {
  if (typeof spec.default !== 'number') throw new TypeError(`option ${spec.library ?? '?'}: its default is not a number`);
  return spec.default;
}

/** A store option read only by other kinds: "schema: read only by postgres stores, not by a redis store". */
export function notReadBy(name: string, spec: OptionSpec, kind: StoreKindScope): string {
  const readers = spec.scope.filter((s) => s !== 'engine' && s !== 'server');
  const listed = readers.length > 1 ? `${readers.slice(0, -1).join(', ')} and ${readers.at(-1) ?? ''}` : readers.join('');
  return `${name}: read only by ${listed} stores, not by a ${kind} store`;
}
