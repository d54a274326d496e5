import type { Logger } from './ports/index.js';

/** The library logs nothing unless given a logger (pino fits the Logger port as it is). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
