/**
 * A real Prometheus for the metrics tests: Debian's `prometheus` package (the server and
 * promtool). A machine without them fails the tests: .ci/run installs them; they are never
 * skipped. Paths: $DELAYQ_PROMETHEUS / $DELAYQ_PROMTOOL, else found on the PATH.
 *
 * Each server runs on a free port with a data directory of its own and is stopped by its
 * PID (the child this helper spawned), never by name.
 */
// test-needs: prometheus
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './ports.js';

function binary(name: string, env: string): string {
  const given = process.env[env];
  if (given !== undefined && given !== '') {
    if (!existsSync(given)) throw new Error(`${env}=${given}: no such file`);
    return given;
  }
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  const found = dirs.map((d) => join(d, name)).find((path) => existsSync(path));
  if (found === undefined) throw new Error(`no ${name} for the Prometheus metrics test: install Debian's prometheus package (apt-get install prometheus: it has prometheus and promtool), as .ci/run does, or set ${env}`);
  return found;
}

export function prometheusPath(): string {
  return binary('prometheus', 'DELAYQ_PROMETHEUS');
}

export function promtoolPath(): string {
  return binary('promtool', 'DELAYQ_PROMTOOL');
}

/** `promtool check metrics` over a scrape's text: its exit code and what it printed. */
export function promtoolCheckMetrics(text: string): { code: number | null; output: string } {
  const result = spawnSync(promtoolPath(), ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  if (result.error) throw result.error;
  return { code: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

export interface PrometheusServer {
  readonly url: string;
  readonly child: ChildProcess;
  readonly logs: string[];
  /** An instant query (GET /api/v1/query) at the server's now: the vector's samples. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** SIGTERM to its PID; resolves once it exited, its data directory removed. */
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `target` (host:port, path /metrics) every `intervalS` seconds. */
export async function startPrometheus(target: string, intervalS = 1): Promise<PrometheusServer> {
  const path = prometheusPath();
  const dir = mkdtempSync(join(tmpdir(), 'delayq-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      `  scrape_interval: ${intervalS}s`,
      `  scrape_timeout: ${intervalS}s`,
      `  evaluation_interval: ${intervalS}s`,
      'scrape_configs:',
      '  - job_name: delayq',
      '    metrics_path: /metrics',
      `    static_configs: [{ targets: ['${target}'] }]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn(path, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}) before it was ready:\n${logs.join('')}`);
      const ready = await fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`prometheus not ready in 30 s:\n${logs.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    child,
    logs,
    stop,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr }).toString()}`);
      const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success' || body.data === undefined) throw new Error(`query ${expr}: ${body.error ?? response.status}`);
      if (body.data.resultType !== 'vector') throw new Error(`query ${expr}: a ${body.data.resultType}, not a vector`);
      return body.data.result.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
    },
  };
}
