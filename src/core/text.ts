/**
 * Text from outside that delayq keeps (a nack's error, a push receiver's answer, a history
 * entry), made holdable by every store, the same way on each: PostgreSQL refuses NUL in
 * text and in jsonb, and a lone UTF-16 surrogate has no UTF-8 form (each driver would write
 * something else in its place, or refuse it). Both become U+FFFD, and the text is cut to a
 * bound without splitting a surrogate pair (a cut pair would be a lone surrogate again).
 *
 *   storableText('bad\u0000body', 100)          'bad\uFFFDbody'
 *   storableText('a\uD83D', 100)                'a\uFFFD'       (a high surrogate alone)
 *   storableText('ab\uD83D\uDE00', 3)           'ab'            (the pair is not cut)
 */

/** The longest error text a task keeps (lastError); a history entry keeps HISTORY_ERROR_LIMIT of it. */
export const MAX_ERROR_LENGTH = 2_000;

// eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL cannot hold
const UNHOLDABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storableText(text: string, max: number): string {
  let cut = text;
  if (text.length > max) {
    // A pair across the cut (a high half last, its low half next) goes whole.
    const last = text.charCodeAt(max - 1);
    const next = text.charCodeAt(max);
    cut = text.slice(0, last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? max - 1 : max);
  }
  UNHOLDABLE.lastIndex = 0;
  return UNHOLDABLE.test(cut) ? cut.replace(UNHOLDABLE, '\uFFFD') : cut;
}
