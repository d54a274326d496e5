// Formatting helpers: every value becomes text; nothing here builds HTML.
export const STATES = ['pending', 'reserved', 'completed', 'dead', 'cancelled'];

export function localTime(ms) {
  if (ms === null || ms === undefined) return '';
  return new Date(ms).toLocaleString(undefined, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function utcTime(ms) {
  if (ms === null || ms === undefined) return '';
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export function hhmm(ms) {
  const d = new Date(ms);
  return String(d.getHours()).padStart(2, '0') + ':' + String(d.getMinutes()).padStart(2, '0');
}

export function dayHour(ms) {
  return new Date(ms).toLocaleDateString(undefined, { weekday: 'short', month: 'short', day: 'numeric' }) + ' ' + hhmm(ms);
}

export function duration(ms) {
  if (!Number.isFinite(ms)) return '';
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

export function number(n) {
  return typeof n === 'number' ? n.toLocaleString() : '';
}

export function rate(n) {
  if (!Number.isFinite(n)) return '';
  return n >= 100 ? Math.round(n).toLocaleString() : n.toFixed(n >= 10 ? 1 : 2);
}

export function pretty(payload) {
  try {
    return JSON.stringify(payload, null, 2);
  } catch {
    return String(payload);
  }
}

/**
 * A quantile (0..1) of the deliveries between two cumulative lateness histograms (le in
 * seconds, counts one longer: the last is +Inf), in ms; null without deliveries.
 */
export function latenessQuantile(le, before, after, q) {
  const deltas = after.map((n, i) => n - (before ? before[i] : 0));
  const total = deltas[deltas.length - 1];
  if (!(total > 0)) return null;
  const target = q * total;
  for (let i = 0; i < deltas.length; i++) {
    if (deltas[i] >= target) {
      if (i >= le.length) return le[le.length - 1] * 1000;
      const lower = i === 0 ? 0 : le[i - 1];
      const below = i === 0 ? 0 : deltas[i - 1];
      const inBucket = deltas[i] - below;
      const share = inBucket > 0 ? (target - below) / inBucket : 1;
      return (lower + (le[i] - lower) * share) * 1000;
    }
  }
  return null;
}
