import type { Command } from 'commander';
import { DelayQClient, DEFAULT_SERVER_URL } from '../client/index.js';
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

/** A request that did not do what was asked (exit code 1), with the server's code. */
export class RequestFailed extends Error {
  override name = 'RequestFailed';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
