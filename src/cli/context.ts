import type { Command } from 'commander';
import { DelayQClient, DEFAULT_SERVER_URL, type AnyErrorCode } from '../client/index.js';
import { createOutput, type Output } from './output.js';

export interface GlobalOptions {
  server?: string;
  token?: string;
  json?: boolean;
}

/** What a client command needs: a client for --server/--token and an output for --json. */
export interface CliContext {
  readonly client: DelayQClient;
  readonly out: Output;
}

export function contextOf(command: Command): CliContext {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const token = globals.token ?? process.env['DELAYQ_TOKEN'];
  return {
    client: new DelayQClient({
      url: globals.server ?? process.env['DELAYQ_SERVER'] ?? DEFAULT_SERVER_URL,
      ...(token ? { token } : {}),
    }),
    out: createOutput(globals.json === true),
  };
}

/** A usage problem found after commander parsed the line (exit code 2). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Codes only the CLI reports (docs/errors.md); the rest are the server's and the client's. */
export const CLI_ERROR_CODES = {
  IMPORT_INCOMPLETE: 'import: some lines were not scheduled (each is listed with its line number and code)',
  DEMO_FAILED: 'demo: the tasks that fired were not exactly the expected ones',
  TASK_EXISTS: 'add: the id is taken by a task that will not run (completed, cancelled or dead); nothing was scheduled',
} as const;

/** A request that did not do what was asked (exit code 1), with the server's code or a CLI code. */
export class RequestFailed extends Error {
  override name = 'RequestFailed';
  constructor(
    readonly code: AnyErrorCode | keyof typeof CLI_ERROR_CODES,
    message: string,
  ) {
    super(message);
  }
}
