/**
 * Loads the Lua scripts: one file per operation under ./lua, each with `-- @include name`
 * lines that are replaced by ./lua/includes/<name>.lua (once per script), so shared helpers
 * are written once and every script Redis sees is self-contained (an include may include
 * others, e.g. codec includes patch; each is inlined once, where first met: shared/includes.ts).
 *
 * The files are read relative to this module, so the same code works from src under tsx
 * and from dist once the build copies src/stores/redis/lua to dist/stores/redis/lua.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolveIncludes } from '../shared/includes.js';

export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

const LUA_DIR = new URL('./lua/', import.meta.url);

export function loadScript(name: string): LuaScript {
  const raw = readFileSync(new URL(`${name}.lua`, LUA_DIR), 'utf8');
  const source = resolveIncludes(raw, (include) => readFileSync(new URL(`includes/${include}.lua`, LUA_DIR), 'utf8'));
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

export const SCRIPT_NAMES = [
  'schedule',
  'cancel',
  'reschedule',
  'reserve',
  'ack',
  'nack',
  'expire',
  'extend',
  'defer',
  'retry-dead',
  'cancel-dead',
  'quarantine',
  'purge',
  'purge-topic',
  'load-due',
  'unpark',
  'parked-init',
  'due-read',
  'promote',
  'reserve-ready',
  'release',
  'lease-acquire',
  'lease-renew',
  'lease-release',
  'heartbeat',
  'schedule-swap',
  'schedule-put-new',
  'schedule-put',
  'schedule-delete',
  'flow-admit',
  'flow-bind',
  'flow-hold',
  'reserved-of',
  'events-append',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

let cache: ReadonlyMap<ScriptName, LuaScript> | null = null;

export function scripts(): ReadonlyMap<ScriptName, LuaScript> {
  cache ??= new Map(SCRIPT_NAMES.map((name) => [name, loadScript(name)]));
  return cache;
}
