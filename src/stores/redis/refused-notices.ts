/**
 * A PUBLISH the server refused inside a script (a Redis user whose ACL lacks PUBLISH, or
 * its channels): the scripts send their wakeup notices with pcall, so their writes and their
 * reply stand, and only the notice is lost. Other processes' consumers then find ready
 * tasks by their sweep (ready-waiters.ts), up to SWEEP_MS late. Logged at most once a
 * minute, with how many were refused since the last line, so the operator sees why.
 */
import type { Clock, Logger } from '../../core/ports/index.js';

const LOG_EVERY_MS = 60_000;

export class RefusedNotices {
  private refusedSinceLog = 0;
  private loggedAt = -Infinity;

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /** A script of `script` had its PUBLISH refused. */
  refused(script: string): void {
    this.refusedSinceLog += 1;
    const now = this.clock.now();
    if (now - this.loggedAt < LOG_EVERY_MS) return;
    this.logger.warn(
      { script, refused: this.refusedSinceLog },
      'redis: the server refused PUBLISH (does the ACL allow it, with &* or the channels?): wakeup notices are lost; other processes find ready tasks by their sweep, up to 2 s late',
    );
    this.loggedAt = now;
    this.refusedSinceLog = 0;
  }
}
