/** Durations on the command line: 500ms, 30s, 5m, 48h, 7d, or a bare number of ms. */
const UNITS = new Map([['ms', 1], ['s', 1_000], ['m', 60_000], ['h', 3_600_000], ['d', 86_400_000]]);

export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (match === null) throw new Error(`"${text}" is not a duration; use e.g. 500ms, 30s, 5m, 48h or 7d`);
  const ms = Math.round(Number(match[1]) * (UNITS.get(match[2] ?? 'ms') ?? 1));
  if (!Number.isSafeInteger(ms)) throw new Error(`"${text}" is too long`);
  return ms;
}

/** A short human form of a duration: 950ms, 30s, 5m 10s, 48h, 3d 4h. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  if (rest < 1_000) return `${sign}${rest}ms`;
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return sign + parts.join(' ');
}
