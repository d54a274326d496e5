/** The `delayq` command line: every command and the global options, without running it. */
import { Command, Option } from 'commander';
import { registerDemoCommand } from './commands/demo.js';
import { registerImportCommand } from './commands/import.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerPushCommands } from './commands/push.js';
import { registerRetryCommand } from './commands/retry.js';
import { registerCronCommands } from './commands/cron.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatsCommand } from './commands/stats.js';
import { registerTaskCommands } from './commands/tasks.js';
import { registerTopicCommands } from './commands/topics.js';

export function buildProgram(): Command {
  const program = new Command('delayq')
    .description('delayq: delayed tasks over HTTP (server, and a client for it)')
    .version('0.1.0')
    .addOption(new Option('--server <url>', 'the server [DELAYQ_SERVER]').default(undefined, 'http://127.0.0.1:7420'))
    .option('--token <token>', 'bearer token [DELAYQ_TOKEN]')
    .option('--json', 'machine output: one JSON document per result')
    .showHelpAfterError()
    // Commander throws instead of exiting, so main decides the exit code (2 for usage errors).
    .exitOverride();
  registerServeCommand(program);
  registerMigrateCommand(program);
  registerTaskCommands(program);
  registerRetryCommand(program);
  registerTopicCommands(program);
  registerStatsCommand(program);
  registerPushCommands(program);
  registerCronCommands(program);
  registerImportCommand(program);
  registerDemoCommand(program);
  return program;
}
