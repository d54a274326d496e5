/**
 * The registry of store kinds: one entry each, the only list of them. Opening a store by
 * URL (open-store.ts), the server's `--store` check, the boundary check (which package each
 * store alone may import), the build (the files each store needs beside its code) and
 * docs/stores.md all read it; a test keeps the docs in step.
 *
 * Pure data: it imports no store, so reading it loads no driver.
 */
export interface StoreKind {
  /** The kind's name, and its folder under src/stores. */
  readonly name: 'memory' | 'sqlite' | 'redis' | 'postgres';
  /** The starts of the store URLs this kind opens. */
  readonly schemes: readonly string[];
  /** How a URL of this kind is written, for help texts and errors. */
  readonly usage: string;
  /** The npm package only this store imports (an optional dependency), or null. */
  readonly driver: string | null;
  /** Survives a crash of the process. */
  readonly durable: boolean;
  /** Several processes may open one backing at once (store.coordination is set). */
  readonly shared: boolean;
  /** Folders under src/stores/<name> that the build copies beside the compiled code. */
  readonly assets: readonly string[];
}

export type StoreKindName = StoreKind['name'];

export const STORE_KINDS: readonly StoreKind[] = [
  { name: 'memory', schemes: ['memory'], usage: 'memory', driver: null, durable: false, shared: false, assets: [] },
  { name: 'sqlite', schemes: ['sqlite:'], usage: 'sqlite:<file>', driver: 'better-sqlite3', durable: true, shared: false, assets: [] },
  {
    name: 'redis',
    schemes: ['redis://', 'rediss://', 'redis+cluster://'],
    usage: 'redis://host:port[/db] or redis+cluster://host:port,host:port',
    driver: 'ioredis',
    durable: true,
    shared: true,
    assets: ['lua'],
  },
  {
    name: 'postgres',
    schemes: ['postgres://', 'postgresql://'],
    usage: 'postgres://user@host:port/db[?schema=delayq]',
    driver: 'pg',
    durable: true,
    shared: true,
    assets: ['sql'],
  },
];

/** The kind a store URL names, or undefined. `memory:` is memory too. */
export function storeKindOf(spec: string): StoreKind | undefined {
  if (spec === 'memory:') return STORE_KINDS.find((kind) => kind.name === 'memory');
  return STORE_KINDS.find((kind) => kind.schemes.some((scheme) => (kind.name === 'memory' ? spec === scheme : spec.startsWith(scheme))));
}

/** "memory, sqlite:<file>, redis://host:port[/db] or ...": every kind's usage, for messages. */
export function storeUsages(): string {
  const usages = STORE_KINDS.map((kind) => kind.usage);
  return `${usages.slice(0, -1).join(', ')} or ${usages.at(-1) ?? ''}`;
}
