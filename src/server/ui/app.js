// The dashboard: one page per route of the hash (#/overview, #/timeline, #/topics,
// #/tasks, #/tasks/<id>, #/schedules, #/schedules/<id>, #/push). preact + htm, no build
// step. Every value from the server is rendered as text: preact escapes text children and
// attribute values, and nothing here writes HTML (no innerHTML, no dangerouslySetInnerHTML).
import { h, render } from './vendor/preact/preact.mjs';
import { useCallback, useEffect, useRef, useState } from './vendor/preact/hooks.mjs';
import htm from './vendor/htm/htm.mjs';
import { ApiError, activityCovering, api, followEvents, getToken, onUnauthorized, pagesCovering, qs, setToken, uiConfig } from './api.js';
import { Chart } from './chart.js';
import { STATES, dayHour, duration, hhmm, latenessQuantile, localTime, number, pretty, rate, utcTime } from './format.js';

const html = htm.bind(h);
const REFRESH_MS = 2_000;
const HISTORY = 150; // samples kept: 5 minutes at 2 s
const ID_PATTERN = /^[A-Za-z0-9._:-]{1,256}$/;
const TOPIC_PATTERN = /^[A-Za-z0-9._:-]{1,200}$/;

// ---------------------------------------------------------------------------------------
// Polling: runs `load` now and every `ms` while the tab is visible; stops on unmount.

function usePoll(load, ms, deps) {
  const [state, setState] = useState({ data: null, error: null });
  useEffect(() => {
    let stopped = false;
    let timer = null;
    const tick = async () => {
      timer = null;
      if (document.hidden) {
        timer = setTimeout(tick, ms);
        return;
      }
      try {
        const data = await load();
        if (!stopped) setState({ data, error: null });
      } catch (error) {
        if (!stopped) setState((s) => ({ data: s.data, error }));
      }
      if (!stopped) timer = setTimeout(tick, ms);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    };
  }, deps);
  return state;
}

function ErrorLine({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert" data-testid="error">${error instanceof ApiError ? `${error.code}: ${error.message}` : String(error.message ?? error)}</p>`;
}

function Notice({ notice }) {
  if (!notice) return null;
  return html`<p class=${notice.ok ? 'notice ok' : 'notice error'} role="status" data-testid="notice">${notice.text}</p>`;
}

const taskHref = (id) => '#/tasks/' + encodeURIComponent(id);

// ---------------------------------------------------------------------------------------
// Overview: counts by state, live rates and lateness over the last minutes.

const RATE_SERIES = [{ label: 'scheduled/s' }, { label: 'delivered/s' }, { label: 'acked/s' }, { label: 'failed/s' }];
const LATENESS_SERIES = [{ label: 'p50 ms' }, { label: 'p99 ms', color: '#c73737' }];
// Kept across visits of the page: going to another page and back keeps the charts.
const overviewHistory = [];

function OverviewPage() {
  const [, setTick] = useState(0);
  const { data, error } = usePoll(
    async () => {
      const [stats, feed] = await Promise.all([api('GET', '/v1/stats'), api('GET', '/v1/activity')]);
      const previous = overviewHistory[overviewHistory.length - 1];
      if (feed.activity) {
        const sample = { at: feed.at, totals: feed.activity.totals, lateness: feed.activity.lateness.counts };
        if (previous && sample.at > previous.at) {
          const seconds = (sample.at - previous.at) / 1000;
          const t = sample.totals;
          const p = previous.totals;
          sample.rates = ['scheduled', 'delivered', 'acked', 'failed'].map((name) => (t[name] - p[name]) / seconds);
          const le = feed.activity.lateness.le;
          sample.p50 = latenessQuantile(le, previous.lateness, sample.lateness, 0.5);
          sample.p99 = latenessQuantile(le, previous.lateness, sample.lateness, 0.99);
        }
        if (!previous || sample.at > previous.at) overviewHistory.push(sample);
        while (overviewHistory.length > HISTORY) overviewHistory.shift();
      }
      setTick((n) => n + 1);
      return { stats, feed };
    },
    REFRESH_MS,
    [],
  );
  if (!data) return html`<section><h1>Overview</h1><${ErrorLine} error=${error} /><p>Loading…</p></section>`;
  const { stats, feed } = data;
  const rated = overviewHistory.filter((s) => s.rates);
  const xs = rated.map((s) => s.at / 1000);
  const rateData = [xs, ...RATE_SERIES.map((_, i) => rated.map((s) => s.rates[i]))];
  const latenessData = [xs, rated.map((s) => s.p50), rated.map((s) => s.p99)];
  const last = rated[rated.length - 1];
  const ready = stats.readyTotal;
  return html`<section>
    <h1>Overview</h1>
    <${ErrorLine} error=${error} />
    <${UnavailableShards} unavailable=${stats.unavailable ?? []} />
    <div class="cards" data-testid="counts">
      ${STATES.map((state) => html`<div class=${'card state-' + state} data-testid=${'count-' + state}><span class="label">${state}</span><span class="value">${number(stats.counts[state])}</span></div>`)}
    </div>
    <div class="cards small">
      <div class="card"><span class="label">ready now</span><span class="value" data-testid="ready">${number(ready)}</span></div>
      <div class="card"><span class="label">timers in the wheel</span><span class="value">${number(stats.timers)}</span></div>
      <div class="card"><span class="label">reserves waiting</span><span class="value">${number(stats.waiting)}</span></div>
      <div class="card"><span class="label">lateness p99 (all time)</span><span class="value">${number(stats.lateness.p99)} ms</span></div>
    </div>
    <div class="charts">
      <${Chart} title=${'Rates per second' + (last ? ` (now: ${RATE_SERIES.map((s, i) => `${s.label} ${rate(last.rates[i])}`).join(', ')})` : '')} series=${RATE_SERIES} data=${rateData} testid="rates-chart" />
      <${Chart} title="Delivery lateness (ms), per 2 s" series=${LATENESS_SERIES} data=${latenessData} testid="lateness-chart" yLabel="ms" />
    </div>
    <dl class="facts" data-testid="facts">
      <dt>store</dt><dd data-testid="store">${stats.store}</dd>
      <dt>version</dt><dd data-testid="version">${feed.version}</dd>
      <dt>uptime</dt><dd data-testid="uptime">${duration(feed.at - feed.startedAt)}</dd>
      <dt>deliveries measured</dt><dd>${number(stats.lateness.count)}</dd>
    </dl>
  </section>`;
}

/** The partitions of a shared store that cannot take writes: their tasks wait, the others go on (docs/redis.md). */
function UnavailableShards({ unavailable }) {
  if (unavailable.length === 0) return null;
  return html`<div class="notice error" role="alert" data-testid="unavailable">
    <strong>${unavailable.length === 1 ? '1 shard' : `${unavailable.length} shards`} of the store cannot take writes</strong>; their tasks wait, the other shards deliver as usual.
    <ul>
      ${unavailable.map((u) => html`<li data-testid="unavailable-shard">shard ${u.partition}: since ${localTime(u.since)} (${duration(Date.now() - u.since)}): ${u.error}</li>`)}
    </ul>
  </div>`;
}

// ---------------------------------------------------------------------------------------
// Timeline: tasks falling due per minute over the next hour, per hour over the next days.

const HOUR = 3_600_000;

function TopicSelect({ topics, value, onChange, testid, any = 'all topics' }) {
  return html`<select value=${value} onChange=${(e) => onChange(e.currentTarget.value)} data-testid=${testid}>
    <option value="">${any}</option>
    ${topics.map((topic) => html`<option value=${topic}>${topic}</option>`)}
  </select>`;
}

/** Every topic with tasks, for the pickers: /v1/stats answers 10,000 topics a page at most. */
async function allTopics() {
  const names = [];
  let after;
  do {
    const stats = await api('GET', '/v1/stats' + qs({ topicLimit: 10_000, after }));
    names.push(...Object.keys(stats.topics));
    after = stats.topicsNext ?? undefined;
  } while (after !== undefined);
  return names.sort();
}

function useTopics() {
  const { data } = usePoll(allTopics, 10_000, []);
  return data ?? [];
}

function TimelineTable({ timeline, label, testid }) {
  const rows = timeline.counts.map((n, i) => ({ at: timeline.from + i * timeline.bucketMs, n })).filter((row) => row.n > 0);
  return html`<table class="compact" data-testid=${testid}>
    <thead><tr><th>${label}</th><th>due</th></tr></thead>
    <tbody>
      ${rows.length === 0 ? html`<tr><td colspan="2" class="muted">nothing pending in this range</td></tr>` : null}
      ${rows.map((row) => html`<tr data-at=${row.at}><td>${timeline.bucketMs >= HOUR ? dayHour(row.at) : hhmm(row.at)}</td><td class="num">${number(row.n)}</td></tr>`)}
    </tbody>
  </table>`;
}

function Coverage({ timeline }) {
  if (timeline.coveredUntil >= timeline.to) return null;
  return html`<p class="muted">The store's time index reaches ${localTime(timeline.coveredUntil)}: tasks due later are parked outside it and are not counted here.</p>`;
}

function TimelinePage() {
  const topics = useTopics();
  const [topic, setTopic] = useState('');
  // The next hour every 10 s; the next days every minute (on SQLite its cost grows with the
  // tasks in the range: docs/dashboard.md#cost).
  const minutesPoll = usePoll(async () => api('GET', '/v1/timeline' + qs({ bucketMs: 60_000, topic: topic || undefined })), 10_000, [topic]);
  const hoursPoll = usePoll(
    async () => {
      const hourFrom = Math.floor(Date.now() / HOUR) * HOUR;
      return api('GET', '/v1/timeline' + qs({ from: hourFrom, to: hourFrom + 7 * 24 * HOUR, bucketMs: HOUR, topic: topic || undefined }));
    },
    60_000,
    [topic],
  );
  const error = minutesPoll.error ?? hoursPoll.error;
  const data = minutesPoll.data && hoursPoll.data ? { minutes: minutesPoll.data, hours: hoursPoll.data } : null;
  const series = [{ label: 'tasks due' }];
  const bars = (t) => [t.counts.map((_, i) => (t.from + i * t.bucketMs) / 1000), t.counts];
  return html`<section>
    <h1>Timeline</h1>
    <p class="muted">Pending tasks by the time they fall due, counted by the store from its index.</p>
    <label>Topic <${TopicSelect} topics=${topics} value=${topic} onChange=${setTopic} testid="timeline-topic" /></label>
    <${ErrorLine} error=${error} />
    ${data
      ? html`<div class="split">
            <div>
              <${Chart} title="Per minute, next hour" series=${series} data=${bars(data.minutes)} bars testid="minutes-chart" />
              <${Coverage} timeline=${data.minutes} />
              <${TimelineTable} timeline=${data.minutes} label="minute" testid="minutes-table" />
            </div>
            <div>
              <${Chart} title="Per hour, next 7 days" series=${series} data=${bars(data.hours)} bars testid="hours-chart" />
              <${Coverage} timeline=${data.hours} />
              <${TimelineTable} timeline=${data.hours} label="hour" testid="hours-table" />
            </div>
          </div>`
      : html`<p>Loading…</p>`}
  </section>`;
}

// ---------------------------------------------------------------------------------------
// Topics: counts, rates, ready, push subscription and its last error; pause or resume a topic;
// its flow limits and throttled count, set or cleared; purge a topic's tasks.

const PURGE_STATES = ['pending', 'dead', 'completed'];

/** A long name or URL as text that may wrap after each . / : - _ ? & = (a <wbr> there), not in the middle of a word. */
function breakable(text) {
  const parts = [];
  for (const piece of String(text).split(/(?<=[./:_?&=-])/)) {
    if (parts.length > 0) parts.push(html`<wbr />`);
    parts.push(piece);
  }
  return parts;
}

/** A row's purge control: a state and a button; the purge runs once confirmed, and says what it did. */
function PurgeControl({ topic, onDone }) {
  const [state, setState] = useState('completed');
  const [busy, setBusy] = useState(false);
  const purge = async () => {
    const what = state === 'completed' ? 'completed and cancelled' : state;
    if (!confirm(`Delete every ${what} task of topic ${topic}? This cannot be undone.`)) return;
    setBusy(true);
    try {
      const result = await api('DELETE', `/v1/topics/${encodeURIComponent(topic)}/tasks` + qs({ state }));
      onDone({ ok: true, text: `Purged ${number(result.purged)} ${what} tasks of ${topic}.` });
    } catch (e) {
      onDone({ ok: false, text: e.message });
    } finally {
      setBusy(false);
    }
  };
  return html`<span class="row nowrap">
    <select value=${state} onChange=${(e) => setState(e.target.value)} data-testid="purge-state" aria-label=${'state to purge of ' + topic}>
      ${PURGE_STATES.map((s) => html`<option value=${s}>${s}</option>`)}
    </select>
    <button disabled=${busy} onClick=${purge} data-testid="purge">Purge</button>
  </span>`;
}

/** A row's pause control: the topic's state, and a button that pauses or resumes it. */
function PauseControl({ topic, paused, onDone }) {
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    setBusy(true);
    try {
      await api('POST', `/v1/topics/${encodeURIComponent(topic)}/${paused ? 'resume' : 'pause'}`, {});
      onDone({ ok: true, text: paused ? `Resumed ${topic}: what fell due is delivered, in runAt order.` : `Paused ${topic}: nothing of it is delivered until it is resumed.` });
    } catch (e) {
      onDone({ ok: false, text: e.message });
    } finally {
      setBusy(false);
    }
  };
  return html`<span class="row nowrap">
    <span data-testid="pause-state" class=${paused ? 'error' : 'muted'}>${paused ? 'paused' : 'delivering'}</span>
    <button disabled=${busy} onClick=${toggle} data-testid="pause-toggle">${paused ? 'Resume' : 'Pause'}</button>
  </span>`;
}

/** A topic's flow limits in a few words: `100 / 1s, burst 100; ≤ 10 in flight`, or `none`. */
function limitsText(limits) {
  if (!limits) return 'none';
  const parts = [];
  if (limits.rate !== null) parts.push(`${number(limits.rate)} / ${duration(limits.periodMs)}, burst ${number(limits.burst)}`);
  if (limits.concurrency !== null) parts.push(`≤ ${number(limits.concurrency)} in flight`);
  return parts.join('; ');
}

const LIMIT_FIELDS = [
  ['rate', 'rate', 'deliveries per period'],
  ['periodMs', 'period ms', 'the period of rate, in ms (default 1000)'],
  ['burst', 'burst', 'the most at once after an idle spell (default rate)'],
  ['concurrency', 'in flight', 'the most deliveries in flight at once'],
];

/**
 * A row's flow limits: what they are, and a small form (opened on demand) that sets them
 * (PUT: the fields left empty take their defaults or no limit) or clears them. The server
 * checks the values and says what is wrong.
 */
function LimitsControl({ topic, limits, onDone }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [fields, setFields] = useState({});
  const edit = () => {
    // The form starts from the limits in force; periodMs and burst mean nothing without a rate.
    const rated = limits?.rate != null;
    const given = { rate: rated, periodMs: rated, burst: rated, concurrency: limits?.concurrency != null };
    setFields(Object.fromEntries(LIMIT_FIELDS.map(([name]) => [name, given[name] ? String(limits[name]) : ''])));
    setOpen(true);
  };
  const run = async (act, text) => {
    setBusy(true);
    try {
      await act();
      setOpen(false);
      onDone({ ok: true, text });
    } catch (e) {
      onDone({ ok: false, text: e.message });
    } finally {
      setBusy(false);
    }
  };
  const path = `/v1/topics/${encodeURIComponent(topic)}/limits`;
  const set = (e) => {
    e.preventDefault();
    const body = {};
    for (const [name] of LIMIT_FIELDS) {
      const text = (fields[name] ?? '').trim();
      // A number (-3 and 2.5 too) is sent as one, anything else as typed: the server's
      // message names the field, its rule and what it got.
      if (text !== '') body[name] = /^-?[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : text;
    }
    return run(() => api('PUT', path, body), `Limits of ${topic} set: every server sharing the store holds them within 1 s.`);
  };
  const clear = () => run(() => api('DELETE', path), `Limits of ${topic} cleared: it is delivered unlimited again.`);
  return html`<span class="row">
    <span data-testid="limits" class=${limits ? '' : 'muted'}>${limitsText(limits)}</span>
    ${open
      ? html`<form class="limits-form" onSubmit=${set} data-testid="limits-form">
          ${LIMIT_FIELDS.map(
            ([name, label, title]) => html`<input size="6" inputmode="numeric" placeholder=${label} title=${title} aria-label=${label + ' of ' + topic} value=${fields[name] ?? ''}
              onInput=${(e) => setFields({ ...fields, [name]: e.target.value })} data-testid=${'limits-' + name} />`,
          )}
          <span class="row">
            <button type="submit" disabled=${busy} data-testid="limits-set">Set</button>
            ${limits ? html`<button type="button" disabled=${busy} onClick=${clear} data-testid="limits-clear">Clear</button>` : null}
            <button type="button" disabled=${busy} onClick=${() => setOpen(false)}>Cancel</button>
          </span>
        </form>`
      : html`<button onClick=${edit} data-testid="limits-edit">${limits ? 'Edit' : 'Limit'}</button>`}
  </span>`;
}

function TopicsPage() {
  const previous = useRef(null);
  // Pages of 100 topics by name, as /v1/stats gives them.
  const [cursors, setCursors] = useState([undefined]);
  const after = cursors[cursors.length - 1];
  const [notice, setNotice] = useState(null);
  // Bumped after a purge: the page reloads at once.
  const [version, setVersion] = useState(0);
  const { data, error } = usePoll(
    async () => {
      const stats = await api('GET', '/v1/stats' + qs({ topicLimit: 100, after }));
      // The counters, failures and subscriptions of this page's range of names (they page by name too).
      const [feed, pushPages] = await Promise.all([
        activityCovering(after, stats.topicsNext),
        pagesCovering('/v1/push', { limit: 1000 }, after, stats.topicsNext, (page) => page.next),
      ]);
      const push = { subscriptions: pushPages.flatMap((page) => page.subscriptions) };
      const before = previous.current;
      previous.current = feed;
      return { stats, feed, push, before };
    },
    REFRESH_MS,
    [after, version],
  );
  const purged = (result) => {
    setNotice(result);
    setVersion((v) => v + 1);
  };
  if (!data) return html`<section><h1>Topics</h1><${ErrorLine} error=${error} /><p>Loading…</p></section>`;
  const { stats, feed, push, before } = data;
  const subscriptions = new Map(push.subscriptions.map((s) => [s.topic, s]));
  // A subscribed topic without tasks is shown on the page whose range of names holds it.
  const inPage = (topic) => (after === undefined || topic > after) && (stats.topicsNext === null || topic <= stats.topicsNext);
  const paused = new Set(stats.paused ?? []);
  const limits = stats.limits ?? Object.create(null);
  const throttled = stats.throttled ?? Object.create(null);
  const names = [...new Set([...Object.keys(stats.topics), ...Object.keys(limits), ...Object.keys(throttled), ...[...subscriptions.keys(), ...paused].filter(inPage)])].sort();
  const rateOf = (topic, name) => {
    const now = feed.activity?.topics[topic];
    const then = before?.activity?.topics[topic];
    if (!now || !before || feed.at <= before.at) return '';
    return rate((now[name] - (then?.[name] ?? 0)) / ((feed.at - before.at) / 1000));
  };
  return html`<section>
    <h1>Topics</h1>
    <${ErrorLine} error=${error} />
    <${Notice} notice=${notice} />
    <div class="scroll">
      <table class="topics" data-testid="topics-table">
        <thead><tr><th>topic</th>${STATES.map((s) => html`<th class="num">${s}</th>`)}<th class="num">ready</th><th class="num">oldest ready</th><th class="num">delivered/s</th><th class="num">acked/s</th><th class="num">failed/s</th><th>push (last failure)</th><th>delivery</th><th>flow limits (throttled)</th><th>purge</th></tr></thead>
        <tbody>
          ${names.length === 0 ? html`<tr><td colspan=${STATES.length + 10} class="muted">no topics yet</td></tr>` : null}
          ${names.map((topic) => {
            const counts = stats.topics[topic] ?? {};
            const subscription = subscriptions.get(topic);
            const failure = feed.pushFailures[topic];
            return html`<tr data-topic=${topic}>
              <td class="topic"><a href=${'#/tasks?topic=' + encodeURIComponent(topic)}>${breakable(topic)}</a></td>
              ${STATES.map((s) => html`<td class="num">${number(counts[s] ?? 0)}</td>`)}
              <td class="num">${number(stats.ready[topic] ?? 0)}</td>
              <td class="num" data-testid="oldest-ready">${stats.oldestReady?.[topic] !== undefined ? duration(Math.max(0, feed.at - stats.oldestReady[topic])) : ''}</td>
              <td class="num">${rateOf(topic, 'delivered')}</td>
              <td class="num">${rateOf(topic, 'acked')}</td>
              <td class="num">${rateOf(topic, 'failed')}</td>
              <td class="wrap">
                ${subscription ? html`<span data-testid="push-url">${breakable(subscription.url)}</span>` : ''}
                ${failure ? html`<div class="error small" data-testid="push-failure">${localTime(failure.at)}: ${failure.error}</div>` : ''}
              </td>
              <td><${PauseControl} topic=${topic} paused=${paused.has(topic)} onDone=${purged} /></td>
              <td class="wrap">
                <${LimitsControl} topic=${topic} limits=${limits[topic] ?? null} onDone=${purged} />
                <div class="muted small" title="deliveries that waited for the flow limits since the server started">throttled <span data-testid="throttled">${number(throttled[topic] ?? 0)}</span></div>
              </td>
              <td>${stats.topics[topic] ? html`<${PurgeControl} topic=${topic} onDone=${purged} />` : ''}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
    <div class="row pager">
      <button disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))} data-testid="topics-prev-page">Previous</button>
      <span class="muted">page ${cursors.length} (${number(stats.topicCount)} topics)</span>
      <button disabled=${!stats.topicsNext} onClick=${() => setCursors([...cursors, stats.topicsNext])} data-testid="topics-next-page">Next</button>
    </div>
  </section>`;
}

// ---------------------------------------------------------------------------------------
// Tasks: find by id, list by topic and state with paging, bulk retry of a topic's dead tasks.

function parseHashQuery() {
  const hash = location.hash;
  const at = hash.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : hash.slice(at + 1));
}

function TasksPage() {
  const topics = useTopics();
  const query = parseHashQuery();
  const [topic, setTopic] = useState(query.get('topic') ?? '');
  const [state, setState] = useState(query.get('state') ?? '');
  const [cursors, setCursors] = useState([undefined]);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [findId, setFindId] = useState('');
  const after = cursors[cursors.length - 1];

  const load = useCallback(async () => {
    try {
      setPage(await api('GET', '/v1/tasks' + qs({ topic: topic || undefined, state: state || undefined, limit: 50, after })));
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, [topic, state, after]);
  useEffect(() => void load(), [load]);

  const find = (event) => {
    event.preventDefault();
    const id = findId.trim();
    if (!ID_PATTERN.test(id)) {
      setNotice({ ok: false, text: `Not a task id: ${id} (ids are 1 to 256 of A-Z a-z 0-9 . _ : -)` });
      return;
    }
    location.hash = taskHref(id);
  };
  const filter = (next) => {
    setCursors([undefined]);
    next();
  };
  const cancelAllDead = async () => {
    if (!confirm(`Cancel every dead task of topic ${topic}? They are given up on for good (purged after the retention).`)) return;
    try {
      const result = await api('POST', `/v1/topics/${encodeURIComponent(topic)}/dead/cancel`, {});
      setNotice({ ok: true, text: `${number(result.cancelled)} dead tasks of ${topic} cancelled${result.more ? '; more remain' : ''}.` });
      await load();
    } catch (e) {
      setNotice({ ok: false, text: e.message });
    }
  };
  const retryAllDead = async () => {
    if (!confirm(`Retry every dead task of topic ${topic}? They are due again at once.`)) return;
    try {
      const result = await api('POST', `/v1/topics/${encodeURIComponent(topic)}/dead/retry`, {});
      setNotice({ ok: true, text: `${number(result.retried)} dead tasks of ${topic} retried${result.more ? '; more remain' : ''}.` });
      await load();
    } catch (e) {
      setNotice({ ok: false, text: e.message });
    }
  };

  return html`<section>
    <h1>Tasks</h1>
    <form class="row" onSubmit=${find} data-testid="find-form">
      <label>Find by id <input value=${findId} onInput=${(e) => setFindId(e.currentTarget.value)} placeholder="task id" data-testid="find-id" /></label>
      <button type="submit">Open</button>
    </form>
    <div class="row">
      <label>Topic <${TopicSelect} topics=${topics} value=${topic} onChange=${(v) => filter(() => setTopic(v))} testid="list-topic" /></label>
      <label>State <select value=${state} onChange=${(e) => filter(() => setState(e.currentTarget.value))} data-testid="list-state">
        <option value="">any state</option>
        ${STATES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select></label>
      ${state === 'dead' && topic && TOPIC_PATTERN.test(topic)
        ? html`<button onClick=${retryAllDead} data-testid="retry-all-dead">Retry all dead of ${topic}</button>
            <button class="danger" onClick=${cancelAllDead} data-testid="cancel-all-dead">Cancel all dead of ${topic}</button>`
        : null}
    </div>
    <${Notice} notice=${notice} />
    <${ErrorLine} error=${error} />
    <div class="scroll">
      <table data-testid="tasks-table">
        <thead><tr><th>id</th><th>topic</th><th>state</th><th>runAt (local)</th><th class="num">attempts</th><th>last error</th></tr></thead>
        <tbody>
          ${page && page.tasks.length === 0 ? html`<tr><td colspan="6" class="muted">no tasks</td></tr>` : null}
          ${(page?.tasks ?? []).map(
            (task) => html`<tr data-id=${task.id}>
              <td class="id"><a href=${taskHref(task.id)}>${task.id}</a></td>
              <td>${task.topic}</td>
              <td><span class=${'badge state-' + task.state}>${task.state}</span></td>
              <td>${localTime(task.runAt)}</td>
              <td class="num">${task.attempts}/${task.maxAttempts}</td>
              <td class="clip">${task.lastError ?? ''}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <div class="row pager">
      <button disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))} data-testid="prev-page">Previous</button>
      <span class="muted">page ${cursors.length}</span>
      <button disabled=${!page?.next} onClick=${() => setCursors([...cursors, page.next])} data-testid="next-page">Next</button>
    </div>
  </section>`;
}

function TaskPage({ id }) {
  const [task, setTask] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [when, setWhen] = useState('');
  const valid = ID_PATTERN.test(id);
  const path = '/v1/tasks/' + encodeURIComponent(id);

  const load = useCallback(async () => {
    if (!valid) return;
    try {
      setTask(await api('GET', path));
      setError(null);
    } catch (e) {
      setTask(null);
      setError(e);
    }
  }, [id]);
  useEffect(() => void load(), [load]);

  // Live: the task is read again when an event of its own comes (a server started with
  // --events); without them the page shows the task as it was loaded, as before.
  const [live, setLive] = useState(false);
  const topic = task?.topic;
  useEffect(() => {
    if (!topic) return undefined;
    return followEvents({ topic }, (event) => void (event.id === id && load()), (state) => setLive(state === 'live'));
  }, [topic, id, load]);

  const act = async (question, done, call) => {
    if (!confirm(question)) return;
    try {
      await call();
      setNotice({ ok: true, text: done });
    } catch (e) {
      setNotice({ ok: false, text: e instanceof ApiError ? `${e.code}: ${e.message}` : String(e) });
    }
    await load();
  };
  const reschedule = (event) => {
    event.preventDefault();
    const runAt = new Date(when).getTime();
    if (!Number.isFinite(runAt)) {
      setNotice({ ok: false, text: 'Pick a date and time first.' });
      return;
    }
    void act(`Move task ${id} to ${localTime(runAt)}?`, `Rescheduled to ${localTime(runAt)}.`, () => api('PATCH', path, { runAt }));
  };

  if (!valid) return html`<section><h1>Task</h1><p class="error" data-testid="error">Not a task id: ${id}</p></section>`;
  return html`<section>
    <h1>Task <span class="id" data-testid="task-id">${id}</span> ${live ? html`<span class="badge" title="updated as its events come" data-testid="live">live</span>` : null}</h1>
    <p><a href="#/tasks">All tasks</a></p>
    <${Notice} notice=${notice} />
    <${ErrorLine} error=${error} />
    ${task
      ? html`<div>
          <div class="row actions">
            ${task.state === 'pending'
              ? html`
                  <button onClick=${() => act(`Run task ${id} now?`, 'Due now.', () => api('PATCH', path, { delayMs: 0 }))} data-testid="run-now">Run now</button>
                  <button class="danger" onClick=${() => act(`Cancel task ${id}?`, 'Cancelled.', () => api('DELETE', path))} data-testid="cancel">Cancel</button>
                  <form class="row" onSubmit=${reschedule}>
                    <input type="datetime-local" step="1" value=${when} onInput=${(e) => setWhen(e.currentTarget.value)} data-testid="reschedule-at" />
                    <button type="submit" data-testid="reschedule">Reschedule</button>
                  </form>`
              : null}
            ${task.state === 'dead' ? html`<button onClick=${() => act(`Retry dead task ${id}?`, 'Retried: pending again.', () => api('POST', path + '/retry', {}))} data-testid="retry">Retry</button>` : null}
          </div>
          <dl class="facts" data-testid="task-facts">
            <dt>state</dt><dd><span class=${'badge state-' + task.state} data-testid="task-state">${task.state}</span></dd>
            <dt>topic</dt><dd>${task.topic}</dd>
            <dt>runAt</dt><dd>${localTime(task.runAt)} <span class="muted">${utcTime(task.runAt)}</span></dd>
            <dt>attempts</dt><dd>${task.attempts} of ${task.maxAttempts}</dd>
            <dt>ttr</dt><dd>${duration(task.ttrMs)}</dd>
            <dt>priority</dt><dd data-testid="task-priority">${task.priority ?? 0}</dd>
            <dt>reserved until</dt><dd>${task.reservedUntil ? html`${localTime(task.reservedUntil)} <span class="muted">${utcTime(task.reservedUntil)}</span>` : '—'}</dd>
            <dt>last error</dt><dd class="pre" data-testid="task-last-error">${task.lastError ?? '—'}</dd>
            <dt>created</dt><dd>${localTime(task.createdAt)} <span class="muted">${utcTime(task.createdAt)}</span></dd>
            <dt>updated</dt><dd>${localTime(task.updatedAt)} <span class="muted">${utcTime(task.updatedAt)}</span></dd>
          </dl>
          <${AttemptHistory} history=${task.history ?? []} />
          <h2>Payload</h2>
          <pre data-testid="payload">${pretty(task.payload)}</pre>
        </div>`
      : null}
  </section>`;
}

// The task's last attempts (at most 10, oldest first, as the server keeps them).
function AttemptHistory({ history }) {
  if (history.length === 0) return html`<h2>History</h2><p class="muted" data-testid="history-empty">No attempt has ended yet.</p>`;
  return html`<h2>History</h2>
    <table data-testid="history">
      <thead><tr><th>attempt</th><th>started</th><th>took</th><th>outcome</th><th>error</th></tr></thead>
      <tbody>
        ${history.map(
          (a) => html`<tr key=${a.attempt} data-testid="history-row">
            <td>${a.attempt}</td>
            <td>${localTime(a.startedAt)} <span class="muted">${utcTime(a.startedAt)}</span></td>
            <td>${a.durationMs < 1_000 ? `${a.durationMs} ms` : duration(a.durationMs)}</td>
            <td><span class=${'badge outcome-' + (a.outcome === 'acked' ? 'ok' : 'failed')} data-testid="history-outcome">${a.outcome}</span></td>
            <td class="pre clip" title=${a.error ?? ''}>${a.error ?? '—'}</td>
          </tr>`,
        )}
      </tbody>
    </table>`;
}

// ---------------------------------------------------------------------------------------
// Push subscriptions.

function PushPage() {
  // Pages of 100 subscriptions by topic, as /v1/push gives them; the failures of their topics.
  const [cursors, setCursors] = useState([undefined]);
  const after = cursors[cursors.length - 1];
  const { data, error } = usePoll(
    async () => {
      const push = await api('GET', '/v1/push' + qs({ limit: 100, after }));
      return [push, await activityCovering(after, push.next)];
    },
    5_000,
    [after],
  );
  const [push, feed] = data ?? [null, null];
  return html`<section>
    <h1>Push subscriptions</h1>
    <p class="muted">Topics whose due tasks are POSTed to a URL (signed webhooks). Set them with the API or the CLI: <code>delayq push set</code>.</p>
    <${ErrorLine} error=${error} />
    <div class="scroll">
      <table data-testid="push-table">
        <thead><tr><th>topic</th><th>url</th><th class="num">timeout</th><th class="num">concurrency</th><th>secret</th><th>updated</th><th>last error</th></tr></thead>
        <tbody>
          ${push && push.subscriptions.length === 0 ? html`<tr><td colspan="7" class="muted">no push subscriptions</td></tr>` : null}
          ${(push?.subscriptions ?? []).map((s) => {
            const failure = feed?.pushFailures[s.topic];
            return html`<tr data-topic=${s.topic}>
              <td>${s.topic}</td><td class="url">${s.url}</td><td class="num">${duration(s.timeoutMs)}</td><td class="num">${s.concurrency}</td>
              <td>${s.secrets.map((x) => x.secret).join(', ')}</td><td>${localTime(s.updatedAt)}</td>
              <td>${failure ? `${localTime(failure.at)}: ${failure.error}` : ''}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
    <div class="row pager">
      <button disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))} data-testid="push-prev-page">Previous</button>
      <span class="muted">page ${cursors.length}</span>
      <button disabled=${!push?.next} onClick=${() => setCursors([...cursors, push.next])} data-testid="push-next-page">Next</button>
    </div>
  </section>`;
}

// ---------------------------------------------------------------------------------------
// Schedules (cron and fixed intervals, docs/cron.md): the list, a schedule's next times,
// pause / resume / delete, each confirmed.

const scheduleHref = (id) => '#/schedules/' + encodeURIComponent(id);

function ruleText(s) {
  if (s.cron !== null) return `${s.cron} (${s.tz})`;
  const ms = s.everyMs;
  const unit = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1_000, 's']].find(([size]) => ms % size === 0);
  return unit ? `every ${number(ms / unit[0])}${unit[1]}` : `every ${number(ms)} ms`;
}

/**
 * The next occurrence still to fire: occurrences are created up to `scheduleLeadMs` ahead, so
 * the latest created one (lastAt) may not be due yet; after it comes nextAt (null once ended).
 */
function upcoming(s, now) {
  if (s.lastAt !== null && s.lastAt >= now) return s.lastAt;
  return s.nextAt;
}

function countText(s) {
  return s.limit !== null ? `${number(s.count)} / ${number(s.limit)}` : number(s.count);
}

function When({ at, none = '—' }) {
  if (at === null || at === undefined) return html`<span class="muted">${none}</span>`;
  return html`${localTime(at)} <span class="muted">${utcTime(at)}</span>`;
}

function SchedulesPage() {
  // Pages of 100 by id, as the tasks list: the API answers at most 1,000 schedules a request.
  const [cursors, setCursors] = useState([undefined]);
  const after = cursors[cursors.length - 1];
  const { data, error } = usePoll(async () => ({ list: await api('GET', '/v1/schedules' + qs({ limit: 100, after })), now: Date.now() }), 5_000, [after]);
  const schedules = data?.list.schedules ?? [];
  return html`<section>
    <h1>Schedules</h1>
    <p class="muted">Recurring schedules: each occurrence is an ordinary task with id <code>${'<schedule id>:<time ms>'}</code>. Create them with the API or the CLI: <code>delayq cron set</code>.</p>
    <${ErrorLine} error=${error} />
    <div class="scroll">
      <table data-testid="schedules-table">
        <thead><tr><th>id</th><th>topic</th><th>rule</th><th>misfire</th><th>state</th><th>next occurrence</th><th class="num">count</th></tr></thead>
        <tbody>
          ${data && schedules.length === 0 ? html`<tr><td colspan="7" class="muted">no schedules</td></tr>` : null}
          ${schedules.map((s) => {
            const next = upcoming(s, data.now);
            return html`<tr data-id=${s.id}>
              <td class="id"><a href=${scheduleHref(s.id)}>${s.id}</a></td>
              <td>${s.topic}</td>
              <td class="id" data-testid="schedule-rule">${ruleText(s)}</td>
              <td>${s.misfire}</td>
              <td data-testid="schedule-state">${s.paused ? html`<span class="badge">paused</span>` : html`<span class="badge state-completed">active</span>`}</td>
              <td data-testid="schedule-next" data-at=${next ?? ''}>${s.paused ? html`<span class="muted">paused</span>` : html`<${When} at=${next} none="ended" />`}</td>
              <td class="num" data-testid="schedule-count">${countText(s)}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
    <div class="row pager">
      <button disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))} data-testid="schedules-prev-page">Previous</button>
      <span class="muted">page ${cursors.length}</span>
      <button disabled=${!data?.list.next} onClick=${() => setCursors([...cursors, data.list.next])} data-testid="schedules-next-page">Next</button>
    </div>
  </section>`;
}

function SchedulePage({ id }) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [deleted, setDeleted] = useState(false);
  const valid = ID_PATTERN.test(id) && id.length <= 200;
  const path = '/v1/schedules/' + encodeURIComponent(id);

  const load = useCallback(async () => {
    if (!valid) return;
    try {
      const [{ schedule }, { times }] = await Promise.all([api('GET', path), api('GET', path + '/next' + qs({ n: 10 }))]);
      setData({ schedule, times, now: Date.now() });
      setError(null);
    } catch (e) {
      setData(null);
      setError(e);
    }
  }, [id]);
  useEffect(() => void load(), [load]);

  const act = async (question, done, call, after = load) => {
    if (!confirm(question)) return;
    try {
      await call();
      setNotice({ ok: true, text: done });
    } catch (e) {
      setNotice({ ok: false, text: e instanceof ApiError ? `${e.code}: ${e.message}` : String(e) });
    }
    await after();
  };
  const remove = () =>
    act(
      `Delete schedule ${id}? Its occurrences not yet due are cancelled; delivered ones stay.`,
      `Schedule ${id} deleted.`,
      () => api('DELETE', path),
      async () => {
        setData(null);
        setDeleted(true);
      },
    );

  if (!valid) return html`<section><h1>Schedule</h1><p class="error" data-testid="error">Not a schedule id: ${id}</p></section>`;
  const s = data?.schedule;
  return html`<section>
    <h1>Schedule <span class="id" data-testid="schedule-id">${id}</span></h1>
    <p><a href="#/schedules">All schedules</a></p>
    <${Notice} notice=${notice} />
    ${deleted ? null : html`<${ErrorLine} error=${error} />`}
    ${s
      ? html`<div>
          <div class="row actions">
            ${s.paused
              ? html`<button onClick=${() => act(`Resume schedule ${id}? It goes on from the first occurrence at or after now.`, 'Resumed.', () => api('POST', path + '/resume', {}))} data-testid="resume">Resume</button>`
              : html`<button onClick=${() => act(`Pause schedule ${id}? No occurrence is created while paused; those created ahead and not yet due are cancelled.`, 'Paused.', () => api('POST', path + '/pause', {}))} data-testid="pause">Pause</button>`}
            <button class="danger" onClick=${remove} data-testid="delete">Delete</button>
          </div>
          <dl class="facts" data-testid="schedule-facts">
            <dt>state</dt><dd data-testid="schedule-state">${s.paused ? 'paused' : 'active'}</dd>
            <dt>topic</dt><dd>${s.topic}</dd>
            <dt>rule</dt><dd class="id">${ruleText(s)}</dd>
            <dt>starts</dt><dd><${When} at=${s.startAt} none="at once" /></dd>
            <dt>ends</dt><dd><${When} at=${s.endAt} none="never" /></dd>
            <dt>misfire</dt><dd>${s.misfire}</dd>
            <dt>occurrences</dt><dd>${countText(s)}${s.limit !== null ? ' (count / limit)' : ''}</dd>
            <dt>latest created</dt><dd>${s.lastAt !== null ? html`<a class="id" href=${taskHref(id + ':' + s.lastAt)}>${id + ':' + s.lastAt}</a> <${When} at=${s.lastAt} />` : '—'}</dd>
            <dt>task options</dt><dd>ttr ${duration(s.ttrMs)}, at most ${s.maxAttempts} attempts${s.priority ? `, priority ${s.priority}` : ''}</dd>
            <dt>created</dt><dd><${When} at=${s.createdAt} /></dd>
            <dt>updated</dt><dd><${When} at=${s.updatedAt} /></dd>
          </dl>
          <h2>Next ${data.times.length} times</h2>
          ${s.paused ? html`<p class="muted">Paused: these are the times the rule gives; none is created until it is resumed.</p>` : null}
          <table class="compact" data-testid="next-times">
            <thead><tr><th>local</th><th>UTC</th></tr></thead>
            <tbody>
              ${data.times.length === 0 ? html`<tr><td colspan="2" class="muted">no more occurrences</td></tr>` : null}
              ${data.times.map((at) => html`<tr data-at=${at}><td>${localTime(at)}</td><td class="muted">${utcTime(at)}</td></tr>`)}
            </tbody>
          </table>
          <h2>Payload</h2>
          <pre data-testid="payload">${pretty(s.payload)}</pre>
        </div>`
      : null}
  </section>`;
}

// ---------------------------------------------------------------------------------------
// The pages in menu order. A page of a feature that comes later is one more entry here,
// { path, title, Page } (and a detail route in route() if it has one).

export const PAGES = [
  { path: 'overview', title: 'Overview', Page: OverviewPage },
  { path: 'timeline', title: 'Timeline', Page: TimelinePage },
  { path: 'topics', title: 'Topics', Page: TopicsPage },
  { path: 'tasks', title: 'Tasks', Page: TasksPage },
  { path: 'schedules', title: 'Schedules', Page: SchedulesPage },
  { path: 'push', title: 'Push', Page: PushPage },
];

function route() {
  const hash = location.hash.replace(/^#\/?/, '').split('?')[0];
  const [path, ...rest] = hash.split('/');
  if ((path === 'tasks' || path === 'schedules') && rest.length > 0) {
    let id = rest.join('/');
    try {
      id = decodeURIComponent(id);
    } catch {
      // shown as given
    }
    const Detail = path === 'tasks' ? TaskPage : SchedulePage;
    return { path, render: () => html`<${Detail} id=${id} key=${id} />` };
  }
  const page = PAGES.find((p) => p.path === path) ?? PAGES[0];
  return { path: page.path, render: () => html`<${page.Page} key=${location.hash} />` };
}

function TokenForm({ message, onDone }) {
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState(message);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setToken(value);
    try {
      await api('GET', '/v1/stats');
      onDone();
    } catch (error) {
      setToken(null);
      setProblem(error instanceof ApiError && error.status === 401 ? 'The server refused this token.' : String(error.message ?? error));
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="token">
    <h1>Token</h1>
    <p>This server needs its bearer token. It is kept in this tab only (sessionStorage) and sent with every request.</p>
    <form onSubmit=${submit} data-testid="token-form">
      <input type="password" autocomplete="current-password" value=${value} onInput=${(e) => setValue(e.currentTarget.value)} placeholder="token" data-testid="token-input" />
      <button type="submit" disabled=${busy || value.length === 0}>Use token</button>
    </form>
    ${problem ? html`<p class="error" role="alert" data-testid="token-error">${problem}</p>` : null}
  </section>`;
}

function App() {
  const [ready, setReady] = useState(false);
  const [tokenPrompt, setTokenPrompt] = useState(null);
  const [current, setCurrent] = useState(route());
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    const onHash = () => {
      setCurrent(route());
      setMenuOpen(false);
    };
    addEventListener('hashchange', onHash);
    const off = onUnauthorized(() => {
      setToken(null);
      setTokenPrompt({ message: 'The server refused the token; give it again.' });
    });
    uiConfig().then(
      (config) => {
        if (config.auth && !getToken()) setTokenPrompt({ message: null });
        setReady(true);
      },
      () => setReady(true),
    );
    return () => {
      removeEventListener('hashchange', onHash);
      off();
    };
  }, []);

  const body = !ready ? html`<p>Loading…</p>` : tokenPrompt ? html`<${TokenForm} message=${tokenPrompt.message} onDone=${() => setTokenPrompt(null)} />` : current.render();
  return html`<div class="layout">
    <header>
      <a class="brand" href="#/overview">delayq</a>
      <button class="menu" aria-label="menu" onClick=${() => setMenuOpen(!menuOpen)}>☰</button>
      <nav class=${menuOpen ? 'open' : ''}>
        ${PAGES.map((p) => html`<a href=${'#/' + p.path} class=${current.path === p.path ? 'active' : ''} data-testid=${'nav-' + p.path}>${p.title}</a>`)}
        ${getToken() ? html`<button class="link" onClick=${() => { setToken(null); setTokenPrompt({ message: null }); }} data-testid="forget-token">Forget token</button>` : null}
      </nav>
    </header>
    <main>${body}</main>
  </div>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
