/**
 * The stores' options as the options table has them (src/core/option-table/stores.ts): which
 * kinds read each, which a URL's query may carry, and their defaults and bounds. openStore
 * refuses an option its kind does not read, and each store's URL parser knows its parameters
 * from here, so no store keeps a list of its own.
 */
import { DelayQError } from '../../core/errors.js';
import { redactUrl } from '../../core/redact.js';
import { notReadBy, STORE_OPTIONS, URL_KINDS, type StoreKindScope, type StoreOptionName } from '../../core/option-table/index.js';
import { validateIntOption } from '../../core/task/validate.js';

const ENTRIES = Object.entries(STORE_OPTIONS) as [StoreOptionName, (typeof STORE_OPTIONS)[StoreOptionName]][];
/** Options that are not in the table: the ports every store is handed (`logger`, `clock`). */
const PORTS: ReadonlySet<string> = new Set(['logger', 'clock']);

const reads = (kind: StoreKindScope, name: StoreOptionName): boolean => (STORE_OPTIONS[name].scope as readonly string[]).includes(kind);

/** The options a `kind` store reads. */
export function optionsOf(kind: StoreKindScope): StoreOptionName[] {
  return ENTRIES.filter(([name]) => reads(kind, name)).map(([name]) => name);
}

/** The query parameters a `kind` store URL takes, by parameter: the options it reads that have one. */
export function urlParameters(kind: StoreKindScope): ReadonlyMap<string, StoreOptionName> {
  if (!URL_KINDS.includes(kind)) return new Map();
  return new Map(ENTRIES.flatMap(([name, spec]) => ('url' in spec && reads(kind, name) ? [[spec.url, name] as const] : [])));
}

/**
 * Why a query parameter is not one of a `kind` URL: an option another kind reads
 * ("schema: read only by postgres stores, not by a redis store"), or unknown (with the known ones).
 */
export function unknownParameter(kind: StoreKindScope, parameter: string, known: Iterable<string>): string {
  const other = ENTRIES.find(([, spec]) => 'url' in spec && spec.url === parameter);
  if (other !== undefined) return notReadBy(parameter, other[1], kind);
  return `unknown parameter "${parameter}"; known: ${[...known].join(', ')}`;
}

/**
 * Refuses (INVALID_OPTION) an option given in code that a `kind` store does not read, or
 * that no store knows: each store read only the ones it knew, so a `prefix` given with a
 * PostgreSQL URL was silently ignored.
 */
export function checkStoreOptions(kind: StoreKindScope, options: object, where: string): void {
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || PORTS.has(name)) continue;
    if (!Object.hasOwn(STORE_OPTIONS, name))
      throw new DelayQError('INVALID_OPTION', `storeOptions.${name.slice(0, 100)}: unknown store option; known: ${[...ENTRIES.map(([n]) => n), ...PORTS].join(', ')}`, { field: name });
    const option = name as StoreOptionName;
    if (!reads(kind, option)) throw new DelayQError('INVALID_OPTION', `${notReadBy(option, STORE_OPTIONS[option], kind)} (${where})`, { field: name, store: kind });
  }
}

/** An integer store option given in code, by its row: the default when not given, else checked against its bounds (INVALID_OPTION). */
export function intOption(name: StoreOptionName, value: number | undefined): number {
  const spec = STORE_OPTIONS[name];
  if (spec.type !== 'integer') throw new TypeError(`store option ${name} is not an integer`);
  return value === undefined ? spec.default : validateIntOption(value, name, spec.min, spec.max);
}

/** An option's value in a message: a URL (listenUrl) without its password. */
function shown(value: unknown): string {
  return typeof value === 'string' && value.includes('://') ? redactUrl(value) : String(value);
}

/** A store option given both in the URL and in code must be the same (INVALID_OPTION): the one given, or undefined. */
export function agreedOption<T>(name: StoreOptionName, inUrl: T | undefined, inCode: T | undefined, spec: string): T | undefined {
  if (inUrl !== undefined && inCode !== undefined && inUrl !== inCode)
    throw new DelayQError('INVALID_OPTION', `${name}: the store URL says ${shown(inUrl)}, the options say ${shown(inCode)}`, { field: name, url: redactUrl(spec) });
  return inCode ?? inUrl;
}
