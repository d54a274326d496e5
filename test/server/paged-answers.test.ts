// Answers bounded in bytes and paged (issue 49): GET /v1/tasks ends a page once it passes
// 4 MiB of tasks (payloads, errors, history) and says where the next starts, through the
// library's listPage, the client and `delayq ls`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TASK_PAGE_SIZE } from '../../src/core/task/list-page.js';
import { useListeningApp } from '../helpers/service.js';
import { runCliProcess } from '../helpers/service-process.js';

describe('answers bounded in bytes, paged', () => {
  const server = useListeningApp();

  it('GET /v1/tasks: a page ends after the task that passes 4 MiB, whatever limit says; next continues, and the pages cover every task once', async () => {
    const { t, url, client } = server;
    // Twelve tasks of a 1 MB payload (the payload limit): 12 MB in one answer before.
    const big = 'x'.repeat(999_000);
    const ids = Array.from({ length: 12 }, (_, i) => `big-${String(i).padStart(2, '0')}`);
    for (const id of ids) await t.queue.schedule({ id, topic: 'bulky', payload: { big }, delayMs: 3_600_000 });
    await t.queue.schedule({ id: 'small-1', topic: 'bulky', payload: { n: 1 }, delayMs: 3_600_000 });

    const first = await fetch(`${url}/v1/tasks?topic=bulky&limit=100`);
    const text = await first.text();
    assert.ok(text.length <= TASK_PAGE_SIZE + 1_100_000, `one answer of ${text.length} characters: at most 4 MiB and one task`);
    const page = JSON.parse(text) as { tasks: { id: string }[]; next: string | null };
    // 4 x ~1 MB fit under 4 MiB; the fifth passes it and ends the page.
    assert.deepEqual(page.tasks.map((task) => task.id), ids.slice(0, 5));
    assert.equal(page.next, 'big-04');

    // Following `next` lists each task once, in id order; the client and the library agree.
    const seen: string[] = [];
    for (let afterId: string | undefined; ; ) {
      const { tasks, next } = await client.listPage({ topic: 'bulky', limit: 100, ...(afterId === undefined ? {} : { afterId }) });
      const same = await t.queue.listPage({ topic: 'bulky', limit: 100, ...(afterId === undefined ? {} : { afterId }) });
      assert.deepEqual([tasks.map((task) => task.id), next], [same.tasks.map((task) => task.id), same.next]);
      seen.push(...tasks.map((task) => task.id));
      if (next === null) break;
      afterId = next;
    }
    assert.deepEqual(seen, [...ids, 'small-1']);
    // A limit below the byte bound still binds; small tasks fill a page to its limit.
    assert.deepEqual((await client.listPage({ topic: 'bulky', limit: 2 })).next, 'big-01');
    assert.deepEqual(await client.listPage({ topic: 'bulky', afterId: 'big-11' }).then((p) => [p.tasks.map((task) => task.id), p.next]), [['small-1'], null]);

    // delayq ls says where the next page starts when the server cut it short.
    const ls = await runCliProcess(['--server', url, 'ls', '--topic', 'bulky', '--limit', '100']);
    assert.equal(ls.code, 0, ls.stderr);
    const lines = ls.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1 + 5 + 1, ls.stdout);
    assert.equal(lines.at(-1), 'more: delayq ls --topic bulky --limit 100 --after big-04');
    for (const id of ids) await t.queue.cancel(id);
  });
});
