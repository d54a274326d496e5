import type { Command } from 'commander';
import { SETTINGS, kebab } from '../../server/config.js';

/**
 * serve: runs the server in this process. Its flags are the options table's rows with a flag
 * (src/core/option-table, docs/options.md), each mirroring its DELAYQ_* variable (flags win).
 * --token is the global option.
 */
export function registerServeCommand(program: Command): void {
  const serve = program.command('serve').description('run the delayq HTTP server (stops gracefully on SIGTERM / SIGINT)');
  for (const setting of Object.values(SETTINGS)) {
    if (setting.flag === 'token') continue;
    const flag = `--${kebab(setting.flag)}`;
    serve.option(setting.isSwitch ? flag : `${flag} <value>`, `${setting.description} [${setting.env}, default ${setting.default}]`);
    // --ui defined first: --no-ui then sets false without making true the default (DELAYQ_UI still applies).
    if (setting.flag === 'ui') serve.option('--no-ui', 'do not serve the dashboard');
  }
  serve.action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
    const { token } = command.optsWithGlobals<{ token?: string }>();
    // Loaded here, not at the top: the server's graph (fastify, pino, the engine, the stores)
    // cost every other command ~0.2-0.4 s of start-up.
    const { runServe } = await import('../../server/main.js');
    process.exitCode = await runServe({ ...options, token });
    process.exit();
  });
}
