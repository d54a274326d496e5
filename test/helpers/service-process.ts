// Spawns the real `delayq` binary (src/cli/main.ts under tsx): the server, and CLI commands.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

export interface SpawnedServer {
  readonly address: string;
  readonly child: ChildProcess;
  readonly logs: string[];
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

/** Starts `delayq serve --port 0 ...` and resolves once it logged the address it listens on. */
export async function spawnServer(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [...CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    env: { ...process.env, DELAYQ_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      logs.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === 'delayq listening' && entry.address) resolve(entry.address);
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${logs.join('\n')}`)));
    setTimeout(() => reject(new Error(`server did not start in 20 s:\n${logs.join('\n')}`)), 20_000).unref();
  });
  return {
    address,
    child,
    logs,
    exited,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one `delayq ...` command to completion. */
export function runCliProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, DELAYQ_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
