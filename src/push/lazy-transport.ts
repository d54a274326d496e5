/**
 * The default push transport, loaded when it is first used: `import 'delayq'` and a queue
 * that never pushes do not load undici. The allowlist is parsed at once, so a bad entry
 * still fails `DelayQueue.open`; `checkUrl` needs only the address guard; the first `send`
 * imports src/push/transport.ts (and undici) and builds the real transport, which every
 * later push uses.
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
  return {
    checkUrl: (url) => checkUrl(url, guard, lookup),
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
