// The metrics as a real Prometheus sees them: the real `delayq serve` (SQLite, ephemeral
// port) scraped every second by Debian's Prometheus, queried through its HTTP API with
// rate() and histogram_quantile(); and `promtool check metrics` over the whole /metrics
// output. Without the binaries this fails (test/helpers/prometheus.ts): .ci/run installs them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DelayQClient } from '../../src/client/index.js';
import { spawnServer } from '../helpers/service-process.js';
import { prometheusPath, promtoolCheckMetrics, promtoolPath, startPrometheus, type PrometheusServer } from '../helpers/prometheus.js';

const dir = mkdtempSync(join(tmpdir(), 'delayq-prom-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ROUNDS = 4;
const PER_ROUND = 5;
const FAR_PER_ROUND = 2;
/** Each `late` task is due this long before it is scheduled: its lateness is a little more, in the (1 s, 2.5 s] bucket. */
const LATE_BY_MS = 1_800;

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The value of a query answering one sample (or null when it answers none). */
async function one(prometheus: PrometheusServer, expr: string): Promise<number | null> {
  const samples = await prometheus.query(expr);
  if (samples.length > 1) throw new Error(`${expr}: ${samples.length} samples, expected one`);
  return samples[0]?.value ?? null;
}

describe('metrics scraped by a real Prometheus', () => {
  it('rate() and histogram_quantile() answer what the traffic did; cancels count under their own topic; drained gauges read 0; promtool passes', async () => {
    // Fail, never skip, without the binaries.
    prometheusPath();
    promtoolPath();
    const server = await spawnServer(['--store', `sqlite:${join(dir, 'm.db')}`]);
    let prometheus: PrometheusServer | null = null;
    try {
      const client = new DelayQClient({ url: server.address });
      prometheus = await startPrometheus(new URL(server.address).host);
      const p = prometheus;
      await until('up{job="delayq"}', () => one(p, 'up{job="delayq"}'), (v) => v === 1);

      // One ready task nobody reserves, due 5 s ago.
      await client.scheduleMany([{ id: 'w1', topic: 'waiting', runAt: Date.now() - 5_000 }]);
      for (let round = 1; round <= ROUNDS; round++) {
        const runAt = Date.now() - LATE_BY_MS;
        await client.scheduleMany(Array.from({ length: PER_ROUND }, (_, i) => ({ id: `late-${round}-${i}`, topic: 'late', runAt })));
        const got: { id: string; receipt: string }[] = [];
        while (got.length < PER_ROUND) got.push(...(await client.reserve('late', { max: PER_ROUND, waitMs: 1_000 })));
        assert.deepEqual(await client.ackMany(got), got.map(() => 'acked'));
        // An hour out: beyond the SQLite store's loaded window, no timer in the wheel.
        const far = Array.from({ length: FAR_PER_ROUND }, (_, i) => `far-${round}-${i}`);
        await client.scheduleMany(far.map((id) => ({ id, topic: 'far', delayMs: 3_600_000 })));
        assert.deepEqual(await client.cancelMany(far), far.map(() => true));
        // Each round in a scrape of its own: rate() sees the counters move between samples.
        await until(`round ${round} scraped`, () => one(p, 'delayq_tasks_acked_total{topic="late"}'), (v) => v === round * PER_ROUND);
      }
      await until('the last cancels scraped', () => one(p, 'delayq_tasks_cancelled_total{topic="far"}'), (v) => v === ROUNDS * FAR_PER_ROUND);
      const total = ROUNDS * PER_ROUND;

      const queries: Record<string, unknown> = {};
      const ask = async (expr: string): Promise<{ metric: Record<string, string>; value: number }[]> => {
        const samples = await p.query(expr);
        queries[expr] = samples.map((s) => ({ ...s.metric, value: s.value }));
        return samples;
      };
      const acked = await ask('sum(rate(delayq_tasks_acked_total{topic="late"}[1m]))');
      assert.equal(acked.length, 1);
      assert.ok(acked[0]!.value > 0, 'acks per second');
      assert.ok(acked[0]!.value * 60 <= 2 * total, `rate ${acked[0]!.value}/s over a minute is at most the acks made (${total}), give or take extrapolation`);
      const cancels = await ask('sum by (topic) (rate(delayq_tasks_cancelled_total[1m]))');
      assert.deepEqual(
        cancels.map((s) => s.metric['topic']),
        ['far'],
        'every cancel under its task\'s topic: none under "_unknown"',
      );
      assert.ok(cancels[0]!.value > 0);
      // Every lateness is at least LATE_BY_MS (1.8 s, in the (1 s, 2.5 s] bucket) and, on a
      // quiet machine, in that bucket: the median then interpolates to 1.75 and the 0.9 quantile
      // to 2.35. A loaded machine delivers some later (a higher bucket, CI once saw a median of
      // 2.28), never earlier: so the quantiles are at least the bucket's lower edge, ordered,
      // and finite, which a histogram without the topic label or without observations is not.
      const median = await ask('histogram_quantile(0.5, sum by (le) (rate(delayq_delivery_lateness_seconds_bucket{topic="late"}[1m])))');
      assert.equal(median.length, 1);
      assert.ok(median[0]!.value >= 1 && Number.isFinite(median[0]!.value), `median ${median[0]!.value}`);
      const p90 = await ask('histogram_quantile(0.9, sum by (le, topic) (rate(delayq_delivery_lateness_seconds_bucket[1m])))');
      assert.deepEqual(
        p90.map((s) => s.metric['topic']),
        ['late'],
        'the histogram has a topic label',
      );
      assert.ok(p90[0]!.value >= median[0]!.value && Number.isFinite(p90[0]!.value), `p90 ${p90[0]!.value}, median ${median[0]!.value}`);
      // Drained: the gauges read 0, they do not keep their last value nor vanish.
      const late = await ask('delayq_tasks{topic="late"}');
      assert.deepEqual(Object.fromEntries(late.map((s) => [s.metric['state'], s.value])), { pending: 0, reserved: 0, completed: total, dead: 0, cancelled: 0 });
      assert.equal((await ask('delayq_ready_tasks{topic="late"}'))[0]?.value, 0);
      assert.equal((await ask('delayq_oldest_ready_age_seconds{topic="late"}'))[0]?.value, 0);
      assert.equal((await ask('delayq_ready_tasks{topic="waiting"}'))[0]?.value, 1);
      const age = (await ask('delayq_oldest_ready_age_seconds{topic="waiting"}'))[0]?.value ?? -1;
      assert.ok(age >= 5 && age < 300, `the waiting task's age: ${age} s`);
      console.log(JSON.stringify({ prometheus: queries }, null, 2));

      // A limited topic that throttled, so promtool checks the flow-limit series too.
      await client.topics.setLimits('metered', { rate: 1, periodMs: 60_000, concurrency: 2 });
      await client.scheduleMany([{ topic: 'metered' }, { topic: 'metered' }]);
      assert.equal((await client.reserve('metered', { max: 2, waitMs: 1_000 })).length, 1);
      assert.equal((await client.reserve('metered', { max: 2, waitMs: 0 })).length, 0);
      const text = await (await fetch(`${server.address}/metrics`)).text();
      assert.match(text, /^process_cpu_seconds_total /m, 'the whole output: the default process metrics too');
      for (const series of ['delayq_topic_limit_rate{topic="metered"} 0.016', 'delayq_topic_limit_concurrency{topic="metered"} 2', 'delayq_topic_throttled_total{topic="metered"} '])
        assert.ok(text.includes(series), series);
      const check = promtoolCheckMetrics(text);
      console.log(`promtool check metrics: exit ${check.code}${check.output === '' ? ', no output' : `\n${check.output}`}`);
      assert.equal(check.code, 0, check.output);
      assert.equal(check.output, '');
    } finally {
      await prometheus?.stop();
      assert.equal(await server.stop(), 0);
    }
  });
});
