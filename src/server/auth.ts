/**
 * Bearer-token check. Both sides are hashed first so timingSafeEqual compares equal
 * lengths and the time taken says nothing about the token's length or content.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from './errors.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export function createTokenCheck(token: string): (authorization: string | undefined) => void {
  const expected = digest(token);
  return (authorization) => {
    if (authorization === undefined) throw new HttpError('UNAUTHORIZED', 'authorization: send Authorization: Bearer <token>');
    const match = /^Bearer (.+)$/i.exec(authorization.trim());
    const given = digest(match?.[1] ?? '');
    // Compare even when the scheme is wrong, so that case costs the same time.
    if (!timingSafeEqual(given, expected) || match === null) throw new HttpError('UNAUTHORIZED', 'authorization: wrong token');
  };
}
