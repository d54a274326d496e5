/**
 * Names from a generator that favours the dangerous ones (issue 45): the store suite's list
 * (`HOSTILE_NAMES`: every Object.prototype member, thenables, delayq's own field names...),
 * and now and then an ordinary valid name, so a run mixes both.
 */
import fc from 'fast-check';
import { HOSTILE_NAMES } from '../../src/testing/store-conformance/hostile-names.js';

export { HOSTILE_NAMES };

/** A valid topic or id, most often one of HOSTILE_NAMES. */
export const hostileName: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_NAMES) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,20}$/) },
);

/** A few distinct such names. */
export const hostileNames = (maxLength: number): fc.Arbitrary<string[]> => fc.uniqueArray(hostileName, { minLength: 1, maxLength });

/** Whether Object.prototype still has only its own members (nothing a name wrote there). */
export function prototypeIntact(): boolean {
  const probe = {} as Record<string, unknown>;
  return Object.getPrototypeOf(probe) === Object.prototype && ['pending', 'reserved', 'completed', 'dead', 'cancelled', 'rate', 'burst', 'periodMs', 'concurrency', 'x-tenant', 'v'].every((key) => probe[key] === undefined);
}
