/**
 * A progress bar on stderr, so stdout stays clean for --json. On a terminal it redraws in
 * place; into a file or pipe it writes a line at each quarter, so logs stay short.
 */
export class ProgressBar {
  private lastQuarter = -1;
  private readonly started = Date.now();

  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  update(fraction: number, done: number): void {
    const f = Math.min(1, Math.max(0, fraction));
    const rate = done / Math.max(0.001, (Date.now() - this.started) / 1000);
    const text = `${this.label} [${'#'.repeat(Math.round(f * 30)).padEnd(30, '-')}] ${(f * 100).toFixed(0).padStart(3)}% ${done} tasks ${Math.round(rate)}/s`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${text}`);
      return;
    }
    const quarter = Math.floor(f * 4);
    if (quarter > this.lastQuarter) {
      this.lastQuarter = quarter;
      this.stream.write(`${text}\n`);
    }
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}
