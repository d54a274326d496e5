/**
 * One process of the background load `npm run chaos -- --load` adds (load.ts):
 *
 *   load-child.ts cpu <deadline>         spins one core: busy slices of SLICE_MS
 *   load-child.ts io <deadline> <dir>    writes FILE_BYTES to one of FILES files in <dir>,
 *                                        fsyncs it, and again: the disk's queue and the
 *                                        page cache's writeback stay busy, as on a machine
 *                                        where other programs commit to disk
 *
 * It ends by itself at <deadline> (epoch ms), when its runner goes away (the IPC channel
 * closes, even if the runner was SIGKILLed), or on SIGTERM; the io kind removes its files.
 * Between slices it yields the event loop, so those events are seen within a slice.
 */
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const SLICE_MS = 50;
const FILES = 4;
const FILE_BYTES = 256 * 1024;

const [kind, deadlineText, dir] = process.argv.slice(2);
const deadline = Number(deadlineText);
if ((kind !== 'cpu' && kind !== 'io') || !Number.isFinite(deadline) || (kind === 'io' && dir === undefined))
  throw new Error(`usage: load-child.ts cpu <deadline> | io <deadline> <dir> (got ${process.argv.slice(2).join(' ')})`);

function end(): never {
  if (kind === 'io') for (let i = 0; i < FILES; i++) rmSync(join(dir!, `load-${process.pid}-${i}`), { force: true });
  process.exit(0);
}
process.on('disconnect', end);
process.on('SIGTERM', end);

const block = Buffer.alloc(64 * 1024, 0x5a);
let file = 0;

function writeOne(): void {
  const fd = openSync(join(dir!, `load-${process.pid}-${file++ % FILES}`), 'w');
  try {
    for (let written = 0; written < FILE_BYTES; written += block.length) writeSync(fd, block);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function slice(): void {
  if (Date.now() >= deadline) end();
  const until = Date.now() + SLICE_MS;
  if (kind === 'cpu') while (Date.now() < until);
  else while (Date.now() < until) writeOne();
  setImmediate(slice);
}
slice();
