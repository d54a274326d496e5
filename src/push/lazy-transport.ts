/**
 * The default push transport, loaded when it is first used: `import 'delayq'` and a queue
 * that never pushes do not load undici. The allowlist is parsed at once, so a bad entry
 * still fails `DelayQueue.open`; `checkUrl` needs only the address guard; the first `send`
 * imports src/push/transport.ts (and undici) and builds the real transport, which every
 * later push uses. A url that passes `checkUrl` (a subscription, a task's own url), or one
 * the Pusher names through `warm` (the subscriptions it reads at start), loads it at once,
 * in the background: the import costs ~50-250 ms, which the first push would otherwise be late by.
 */
import type { PushTransport } from '../core/push.js';
import { checkUrl, createAddressGuard, systemLookupAll } from './address-guard.js';
import type { PushTransportOptions, UndiciPushTransport } from './transport.js';

export function createLazyPushTransport(options: PushTransportOptions = {}): PushTransport {
  const guard = createAddressGuard(options.allow ?? []);
  const lookup = options.lookup ?? systemLookupAll;
  let loaded: Promise<UndiciPushTransport> | null = null;
  let closed = false;
  const load = (): Promise<UndiciPushTransport> => (loaded ??= import('./transport.js').then((m) => m.createPushTransport(options)));
  /** Loads the real transport and lets it get ready for `url`; errors are the first send's to report. */
  const warm = (url: string): void => {
    if (closed) return;
    load().then(
      (transport) => transport.warm?.(url),
      () => undefined,
    );
  };
  return {
    // A url that passed is one that will be pushed to (a subscription, a task's own url):
    // the HTTP client loads now, not when the first push is due.
    checkUrl: async (url) => {
      await checkUrl(url, guard, lookup);
      warm(url);
    },
    warm,
    async send(request, signal) {
      if (closed) return { kind: 'failure', reason: 'aborted' };
      return (await load()).send(request, signal);
    },
    async close() {
      closed = true;
      if (loaded !== null) await (await loaded).close();
    },
  };
}
