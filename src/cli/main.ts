#!/usr/bin/env node
/**
 * `delayq`: exit 0 on success, 1 when a request failed (the server's error code is
 * printed), 2 for bad usage (commander's own errors included).
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CommanderError } from 'commander';
import { DelayQClientError } from '../client/index.js';
import { RequestFailed, UsageError } from './context.js';
import { buildProgram } from './program.js';

export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      process.stderr.write(`delayq: ${error.message}\n`);
      return 2;
    }
    if (error instanceof DelayQClientError || error instanceof RequestFailed) {
      process.stderr.write(`delayq: ${error.code}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`delayq: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = await runCli(process.argv.slice(2));
}
