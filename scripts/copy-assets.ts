// The build's last step: the files the compiled code reads beside itself, copied into dist
// (tsc copies only .ts): each store's assets, as the registry lists them (src/stores/kinds.ts),
// and the dashboard's static files.
import { cpSync } from 'node:fs';
import { STORE_KINDS } from '../src/stores/kinds.js';

const folders = [...STORE_KINDS.flatMap((kind) => kind.assets.map((asset) => `stores/${kind.name}/${asset}`)), 'server/ui'];
for (const folder of folders) cpSync(`src/${folder}`, `dist/${folder}`, { recursive: true });
