/** Runs `node --test` from inside a test, as a contributor would from a shell. */
import { spawn } from 'node:child_process';

export interface NodeTestRun {
  readonly code: number | null;
  /** stdout and stderr, in arrival order. */
  readonly output: string;
}

/**
 * `node <args>` with this process's environment and `env`, without NODE_TEST_CONTEXT (by
 * which node:test knows a child of its own runner, and would run no file).
 */
export async function runNode(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<NodeTestRun> {
  const inherited = { ...process.env };
  delete inherited['NODE_TEST_CONTEXT'];
  const child = spawn(process.execPath, args, { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
