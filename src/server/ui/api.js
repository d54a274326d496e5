// The /v1 API as the pages use it: the bearer token from sessionStorage (asked once per
// tab), JSON in and out, {error: {code, message}} turned into an ApiError.
const TOKEN_KEY = 'delayq.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const listeners = new Set();
/** Called with the error when the server refuses the token (401). */
export function onUnauthorized(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * The answer's objects without a prototype: the pages look topics, origins and header names
 * up in them (`stats.ready[topic]`), and a topic named `constructor` or `toString` must read
 * as nothing, not as Object.prototype's function (JSON.parse already keeps `__proto__` as a
 * key of its own).
 */
function withoutPrototypes(_key, value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.setPrototypeOf(value, null) : value;
}

export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  const token = getToken();
  if (token) headers.authorization = `Bearer ${token}`;
  const init = { method, headers };
  // The server refuses a POST not declared JSON, even one with no body (docs/service.md, Security).
  if (body !== undefined || method === 'POST') headers['content-type'] = 'application/json';
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  let data = null;
  try {
    data = JSON.parse(await response.text(), withoutPrototypes);
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, data?.error?.code ?? 'HTTP_' + response.status, data?.error?.message ?? response.statusText);
    if (response.status === 401) for (const listener of listeners) listener(error);
    throw error;
  }
  return data;
}

/** What the page needs before its first API call: does the server want a token? (No auth needed.) */
export async function uiConfig() {
  const response = await fetch('config.json', { headers: { accept: 'application/json' } });
  return response.json();
}

export const qs = (params) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? '?' + text : '';
};

/**
 * The pages of a listing by topic (GET /v1/activity, GET /v1/push) that cover the topics
 * after `after` up to `until` (null: to the end): a page of the dashboard shows a range of
 * topic names, and these listings page by name too, `nextOf` reading a page's cursor.
 */
export async function pagesCovering(path, params, after, until, nextOf) {
  const pages = [];
  let cursor = after;
  for (;;) {
    const page = await api('GET', path + qs({ ...params, after: cursor }));
    pages.push(page);
    const next = nextOf(page);
    if (next === null || (until !== null && until !== undefined && next >= until)) return pages;
    cursor = next;
  }
}

/** The activity feed of a range of topics: the first page's totals, every page's per-topic parts. */
export async function activityCovering(after, until) {
  const pages = await pagesCovering('/v1/activity', { topicLimit: 1000 }, after, until, (page) => page.topicsNext);
  const [first] = pages;
  const merged = (part) => Object.assign(Object.create(null), ...pages.map(part));
  return {
    ...first,
    activity: first.activity === null ? null : { ...first.activity, topics: merged((page) => page.activity.topics) },
    pushFailures: merged((page) => page.pushFailures),
  };
}

/** The longest line of an event stream the page takes. */
const MAX_EVENT_LINE = 64 * 1024;

/**
 * Follows GET /v1/events (Server-Sent Events, read with fetch so the token goes in the
 * Authorization header, which EventSource cannot send): `onEvent(event)` for each event;
 * a stream that drops is opened again after the server's retry wait, with Last-Event-ID.
 * `onState('live' | 'waiting' | 'off')`: 'off' when the server has no events (400, started
 * without --events) or refuses the token; the page then keeps to what it polls. Returns stop().
 */
export function followEvents(params, onEvent, onState) {
  const stopper = new AbortController();
  const signal = stopper.signal;
  let last = null;
  let retryMs = 2_000;
  const run = async () => {
    while (!signal.aborted) {
      const headers = { accept: 'text/event-stream' };
      const token = getToken();
      if (token) headers.authorization = `Bearer ${token}`;
      if (last !== null) headers['last-event-id'] = last;
      try {
        const response = await fetch('/v1/events' + qs(params), { headers, signal });
        if (response.status >= 400 && response.status < 500) {
          onState('off');
          return;
        }
        if (!response.ok || response.body === null) throw new Error('HTTP ' + response.status);
        onState('live');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let text = '';
        let data = [];
        let id = null;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
          let cut;
          while ((cut = text.indexOf('\n')) >= 0) {
            const line = text.slice(0, cut).replace(/\r$/, '');
            text = text.slice(cut + 1);
            if (line === '') {
              if (data.length > 0 && id !== null) {
                let event = null;
                try {
                  event = JSON.parse(data.join('\n'), withoutPrototypes);
                } catch {
                  event = null;
                }
                last = id;
                if (event !== null && typeof event === 'object' && typeof event.id === 'string' && typeof event.type === 'string') onEvent(event);
              }
              data = [];
            } else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
            else if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('retry:') && /^\d{1,6}$/.test(line.slice(6).trim())) retryMs = Math.min(60_000, Math.max(100, Number(line.slice(6).trim())));
          }
          if (text.length > MAX_EVENT_LINE) throw new Error('an event line too long');
        }
      } catch {
        if (signal.aborted) return;
      }
      onState('waiting');
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  };
  void run();
  return () => stopper.abort();
}
