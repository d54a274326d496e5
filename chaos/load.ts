/**
 * The background load of `npm run chaos -- --load`: CPU spinners and fsync writers
 * (load-child.ts) that run beside a scenario's processes, so the faults land on a machine
 * whose cores and disk are busy, where timers fire late, commits wait for the disk and a
 * process can be off the CPU for a while.
 *
 *   const load = startLoad({ cpu: 1, io: 1 }, 10 * 60_000);   // 1 spinner, 1 writer
 *   ... the scenario ...
 *   await load.stop();                                         // SIGTERM by PID, then SIGKILL
 *
 * Bounded three ways: each child ends at its deadline, when the runner's IPC channel
 * closes (the runner died), and when stopped here. killNow() is for the runner's exit and
 * SIGINT handlers, which cannot wait.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadSpec {
  /** CPU spinners, each one busy core. */
  readonly cpu: number;
  /** Writers that write and fsync files in a temp dir in a loop. */
  readonly io: number;
}

export interface Load {
  readonly pids: readonly number[];
  stop(): Promise<void>;
  killNow(): void;
}

const CHILD = join(import.meta.dirname, 'load-child.ts');
/** A child that ignores SIGTERM this long is SIGKILLed. */
const STOP_GRACE_MS = 2_000;

export function startLoad(spec: LoadSpec, maxMs: number): Load {
  const deadline = String(Date.now() + maxMs);
  const dir = mkdtempSync(join(tmpdir(), 'delayq-chaos-load-'));
  const start = (args: string[]): ChildProcess =>
    spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const children = [
    ...Array.from({ length: spec.cpu }, () => start(['cpu', deadline])),
    ...Array.from({ length: spec.io }, () => start(['io', deadline, dir])),
  ];
  const alive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;
  const exits = children.map((child) => (alive(child) ? new Promise<void>((resolve) => child.once('exit', () => resolve())) : Promise.resolve()));
  return {
    pids: children.map((c) => c.pid ?? -1),
    async stop() {
      for (const child of children) if (alive(child)) child.kill('SIGTERM');
      const timer = setTimeout(() => children.forEach((child) => alive(child) && child.kill('SIGKILL')), STOP_GRACE_MS);
      await Promise.all(exits);
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
    killNow() {
      for (const child of children) if (alive(child)) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
